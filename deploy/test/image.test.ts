// The image's recipe, checked without a Docker engine (none runs on these machines): what the
// Dockerfile says, and the build context .dockerignore leaves. helm/test/processes.int.test.ts
// runs the entrypoint and the services as the chart's manifests do.
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const REPO = fileURLToPath(new URL("../..", import.meta.url));
const dockerfile = readFileSync(path.join(REPO, "Dockerfile"), "utf8");
const instructions = dockerfile
  .replace(/\\\n/g, " ")
  .split("\n")
  .filter((line) => line.trim() !== "" && !line.startsWith("#"));
const stages = instructions.reduce<string[][]>((all, line) => {
  if (line.startsWith("FROM ")) all.push([]);
  all.at(-1)?.push(line);
  return all;
}, []);
const final = stages.at(-1)!;

/** .dockerignore's patterns as Docker reads them: relative to the context, `**` any depth. */
function ignored(): (relative: string) => boolean {
  const patterns = readFileSync(path.join(REPO, ".dockerignore"), "utf8")
    .split("\n")
    .map((line) => line.trim())
    .filter((line) => line !== "" && !line.startsWith("#"))
    .map(
      (pattern) =>
        new RegExp(
          `^${pattern
            .replace(/[.+^${}()|[\]]/g, "\\$&")
            .replace(/\?/g, "[^/]")
            .replace(/\*\*\//g, "\0")
            .replace(/\*/g, "[^/]*")
            .replace(/\0/g, "(.*/)?")}(/.*)?$`,
        ),
    );
  return (relative) => patterns.some((pattern) => pattern.test(relative));
}

function context(): string[] {
  const skip = ignored();
  const files: string[] = [];
  const walk = (dir: string) => {
    for (const name of readdirSync(dir)) {
      const absolute = path.join(dir, name);
      const relative = path.relative(REPO, absolute);
      if (skip(relative)) continue;
      if (statSync(absolute).isDirectory()) walk(absolute);
      else files.push(relative);
    }
  };
  walk(REPO);
  return files;
}

describe("the Dockerfile", () => {
  it("builds on a pinned Node, runs as a numeric non-root user, with tini as PID 1", () => {
    expect(instructions[0]).toMatch(/^ARG NODE_VERSION=\d+\.\d+\.\d+$/);
    for (const stage of stages)
      expect(stage[0]).toMatch(/^FROM node:\$\{NODE_VERSION\}-bookworm-slim/);
    expect(final).toContain("USER 10001:10001");
    expect(final.find((l) => l.startsWith("ENTRYPOINT"))).toBe(
      'ENTRYPOINT ["/usr/bin/tini", "--", "rewind"]',
    );
    // The entrypoint's `rewind` is the CLI's bin, linked into the PATH.
    expect(final.join("\n")).toContain("ln -s /app/libs/cli/bin/rewind.mjs /usr/local/bin/rewind");
    expect(existsSync(path.join(REPO, "libs/cli/bin/rewind.mjs"))).toBe(true);
  });

  it("has no compiler in the final image", () => {
    const installs = final.filter((line) => line.startsWith("RUN ")).join(" ");
    for (const tool of ["g++", "gcc", "make", "python3", "build-essential", "clang"])
      expect(installs.split(/\s+/)).not.toContain(tool);
    // The build stage has them (isolated-vm 5 compiles on Node 20), and only it.
    expect(stages[0]!.join(" ")).toMatch(/g\+\+/);
    expect(final.filter((line) => line.startsWith("COPY"))).toEqual([
      "COPY --from=build /app /app",
    ]);
  });

  it("documents one build per runtime, each the exact Node its epochs were recorded on", () => {
    // A patch release of Node may bring another V8, ICU or time-zone data, which an epoch pins:
    // a worker on any other version refuses the epoch. The corpora name the version they were
    // recorded on (epochs 2, 3 and 4: Node 20, 24 and 26).
    for (const epoch of [2, 3, 4]) {
      const manifest = readFileSync(path.join(REPO, `corpus/epoch-${epoch}/manifest.json`), "utf8");
      const version = /"recorded": "v(\d+)\.(\d+)\.(\d+) /.exec(manifest)!.slice(1).join(".");
      const major = version.split(".")[0]!;
      expect(dockerfile).toMatch(
        new RegExp(
          `NODE_VERSION=${version.replaceAll(".", "\\.")}\\s+-t rewind:[^ ]+-node${major}`,
        ),
      );
      if (major === "24") expect(instructions[0]).toBe(`ARG NODE_VERSION=${version}`);
    }
  });
});

describe("the build context", () => {
  const files = context();

  it("leaves out what the image builds again and what is not the product", () => {
    for (const prefix of ["node_modules/", ".git/", "libs/core/dist/", ".rewind/"])
      expect(files.filter((f) => f.startsWith(prefix))).toEqual([]);
    expect(files.some((f) => f.includes("/node_modules/"))).toBe(false);
    expect(files.some((f) => f.endsWith(".tsbuildinfo"))).toBe(false);
  });

  it("holds all that `npm ci && npm run build` needs: the lock file, every workspace and the migrations", () => {
    expect(files).toContain("package-lock.json");
    expect(files).toContain("turbo.json");
    const root = JSON.parse(readFileSync(path.join(REPO, "package.json"), "utf8")) as {
      workspaces: string[];
    };
    for (const pattern of root.workspaces) {
      const base = pattern.replace(/\/\*$/, "");
      const dirs = pattern.endsWith("/*")
        ? readdirSync(path.join(REPO, base)).map((d) => `${base}/${d}`)
        : [base];
      for (const dir of dirs.filter((d) => existsSync(path.join(REPO, d, "package.json"))))
        expect(files).toContain(`${dir}/package.json`);
    }
    expect(files.filter((f) => /^migrations\/\d{4}_.+\.sql$/.test(f)).length).toBeGreaterThan(0);
    expect(files).toContain("libs/sandbox/src/guest/runtime.ts");
  });
});

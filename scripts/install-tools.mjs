// Installs the pinned tools the test suite drives (scripts/tools.json): Go programs (Helm,
// kubeconform) built from the Go module proxy, and the offline Kubernetes, KEDA and Prometheus
// Operator schemas built from pinned Go modules. Everything lands in one cache folder
// (REWIND_TOOLS_DIR, default ~/.cache/rewind/tools), keyed by the pins, so a second run costs
// nothing. Their code is never part of the repository.
//
//   node scripts/install-tools.mjs          install what is missing, print where
//   node scripts/install-tools.mjs --traces also Jaeger, the traces test's backend (a long build)
//   node scripts/install-tools.mjs --check  exit 1 saying what to run when something is missing
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

const pinsFile = fileURLToPath(new URL("tools.json", import.meta.url));
const pins = JSON.parse(readFileSync(pinsFile, "utf8"));
const digest = (value) =>
  createHash("sha256").update(JSON.stringify(value)).digest("hex").slice(0, 12);

/** Where each tool is (or will be): the tests import this. */
export function toolPaths() {
  const root = process.env.REWIND_TOOLS_DIR || path.join(homedir(), ".cache", "rewind", "tools");
  const bin = path.join(root, "bin", digest(pins.goPrograms));
  return {
    root,
    helm: path.join(bin, "helm"),
    kubeconform: path.join(bin, "kubeconform"),
    jaeger: path.join(root, "bin", digest(pins.goTools), "jaeger"),
    schemas: path.join(root, "k8s-schemas", digest([pins.kubernetesVersions, pins.crdModules])),
    kubernetesVersions: pins.kubernetesVersions,
  };
}

/**
 * What is missing, each with the command that installs it: the chart's tools, and with
 * `{ jaeger: true }` the traces test's backend too.
 */
export function missingTools(options = {}) {
  const paths = toolPaths();
  const missing = [];
  for (const name of Object.keys(pins.goPrograms)) if (!existsSync(paths[name])) missing.push(name);
  if (options.jaeger === true && !existsSync(paths.jaeger)) missing.push("jaeger");
  if (!existsSync(path.join(paths.schemas, "complete"))) missing.push("Kubernetes schemas");
  return missing;
}

function go(args, env = {}) {
  execFileSync("go", args, {
    stdio: ["ignore", "inherit", "inherit"],
    env: { ...process.env, ...env },
  });
}

function install() {
  const paths = toolPaths();
  try {
    execFileSync("go", ["version"], { stdio: "ignore" });
  } catch {
    console.error(
      "✗ The chart's tests need Helm and kubeconform, built from the Go module proxy, and there is no `go` here.\n" +
        "  Install Go (https://go.dev/doc/install, or `apt-get install golang`), then run `node scripts/install-tools.mjs`.",
    );
    process.exit(1);
  }
  const gobin = path.dirname(paths.helm);
  mkdirSync(gobin, { recursive: true });
  for (const [name, program] of Object.entries(pins.goPrograms)) {
    if (existsSync(paths[name])) continue;
    const started = Date.now();
    console.log(`installing ${program}`);
    go(["install", program], { GOBIN: gobin, GOFLAGS: "-mod=mod" });
    console.log(`  ${name} built in ${((Date.now() - started) / 1000).toFixed(0)} s`);
  }
  // Jaeger (the traces test's backend) is a long build (tens of minutes on two cores): only
  // with --traces, until CI has it cached.
  const goTools = process.argv.includes("--traces") ? Object.entries(pins.goTools) : [];
  for (const [name, program] of goTools) {
    if (name === "comment" || existsSync(paths[name])) continue;
    const started = Date.now();
    console.log(`installing ${program} (several minutes the first time)`);
    // A module of its own in the cache, never in the repository: `go get -tool` pins the program
    // and its dependencies there, then `go build` makes the binary beside it.
    const [pkg] = program.split("@");
    const moduleDir = path.join(paths.root, "go-tools", digest(pins.goTools));
    mkdirSync(moduleDir, { recursive: true });
    if (!existsSync(path.join(moduleDir, "go.mod")))
      writeFileSync(path.join(moduleDir, "go.mod"), "module rewind.local/tools\n\ngo 1.24\n");
    const inModule = { cwd: moduleDir, stdio: ["ignore", "inherit", "inherit"] };
    execFileSync("go", ["get", "-tool", program], inModule);
    mkdirSync(path.dirname(paths[name]), { recursive: true });
    execFileSync("go", ["build", "-o", paths[name], pkg], inModule);
    console.log(`  ${name} built in ${((Date.now() - started) / 1000).toFixed(0)} s`);
  }
  if (!existsSync(path.join(paths.schemas, "complete"))) {
    const modules = [
      ...pins.kubernetesVersions.map((v) => `k8s.io/kubernetes@v${v}`),
      ...pins.crdModules.map((m) => m.module),
    ];
    console.log(`downloading ${modules.join(", ")}`);
    // -x: nothing; each module zip comes from the proxy into the module cache.
    for (const module of modules) go(["mod", "download", module], { GOFLAGS: "-mod=mod" });
    const modCache = execFileSync("go", ["env", "GOMODCACHE"], { encoding: "utf8" }).trim();
    execFileSync(
      process.execPath,
      [
        fileURLToPath(new URL("../helm/scripts/k8s-schemas.mjs", import.meta.url)),
        modCache,
        paths.schemas,
      ],
      { stdio: "inherit" },
    );
    writeFileSync(path.join(paths.schemas, "complete"), `${new Date().toISOString()}\n`);
  }
  console.log(`tools ready under ${paths.root}`);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  if (process.argv.includes("--check")) {
    const missing = missingTools({ jaeger: process.argv.includes("--traces") });
    if (missing.length > 0) {
      console.error(
        `✗ Missing test tools: ${missing.join(", ")}. Run \`node scripts/install-tools.mjs\` (it builds them with Go).`,
      );
      process.exit(1);
    }
  } else install();
}

// Installs the pinned tools the test suite drives (scripts/tools.json): Go programs (Helm,
// kubeconform) built from the Go module proxy, the traces test's OpenTelemetry Collector (made by
// the Collector's builder from pinned components), and the offline Kubernetes, KEDA and Prometheus
// Operator schemas built from pinned Go modules. Everything lands in one cache folder
// (REWIND_TOOLS_DIR, default ~/.cache/rewind/tools), keyed by the pins, so a second run costs
// nothing. Their code is never part of the repository.
//
//   node scripts/install-tools.mjs          install what is missing, print where
//   node scripts/install-tools.mjs --check  exit 1 saying what to run when something is missing
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
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
    collector: path.join(root, "bin", digest(pins.collector), "otelcol"),
    schemas: path.join(root, "k8s-schemas", digest([pins.kubernetesVersions, pins.crdModules])),
    kubernetesVersions: pins.kubernetesVersions,
  };
}

/**
 * What is missing: the chart's tools, the schemas and (unless `{ collector: false }`) the traces
 * test's Collector.
 */
export function missingTools(options = {}) {
  const paths = toolPaths();
  const missing = [];
  for (const name of Object.keys(pins.goPrograms)) if (!existsSync(paths[name])) missing.push(name);
  if (options.collector !== false && !existsSync(paths.collector))
    missing.push("the OpenTelemetry Collector");
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
  if (!existsSync(paths.collector)) {
    const started = Date.now();
    const { builder, receivers, exporters } = pins.collector;
    console.log(
      `building an OpenTelemetry Collector with ${builder} (a few minutes the first time)`,
    );
    // The builder writes the Collector's sources into a folder of the cache (never the
    // repository) from a manifest of the pinned components, then compiles them.
    const work = path.join(paths.root, "collector", digest(pins.collector));
    mkdirSync(work, { recursive: true });
    go(["install", builder], { GOBIN: work, GOFLAGS: "-mod=mod" });
    const modules = (list) => list.map((gomod) => `  - gomod: ${gomod}\n`).join("");
    writeFileSync(
      path.join(work, "manifest.yaml"),
      `dist:\n  name: otelcol\n  output_path: ${path.join(work, "out")}\n` +
        `receivers:\n${modules(receivers)}exporters:\n${modules(exporters)}`,
    );
    execFileSync(path.join(work, "builder"), ["--config", path.join(work, "manifest.yaml")], {
      cwd: work,
      stdio: ["ignore", "inherit", "inherit"],
    });
    mkdirSync(path.dirname(paths.collector), { recursive: true });
    renameSync(path.join(work, "out", "otelcol"), paths.collector);
    console.log(`  the Collector built in ${((Date.now() - started) / 1000).toFixed(0)} s`);
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
    const missing = missingTools();
    if (missing.length > 0) {
      console.error(
        `✗ Missing test tools: ${missing.join(", ")}. Run \`node scripts/install-tools.mjs\` (it builds them with Go).`,
      );
      process.exit(1);
    }
  } else install();
}

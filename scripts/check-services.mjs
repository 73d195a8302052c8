// Before the test suite: are Postgres and Redis reachable? Say exactly what is missing and how
// to start it, instead of letting a hundred tests time out.
import { existsSync } from "node:fs";
import net from "node:net";

const services = [
  { name: "PostgreSQL", url: process.env.TEST_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/postgres", port: 5432,
    start: "pg_ctlcluster --skip-systemctl-redirect $(ls /etc/postgresql) main start" },
  { name: "Redis", url: process.env.TEST_REDIS_URL ?? "redis://127.0.0.1:6379", port: 6379,
    start: 'redis-server --daemonize yes --bind 127.0.0.1 --port 6379 --save "" --appendonly no' },
];

function reachable(url) {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const socket = net.connect({ host: hostname, port: Number(port) }, () => {
      socket.end();
      resolve(true);
    });
    socket.setTimeout(2000, () => {
      socket.destroy();
      resolve(false);
    });
    socket.on("error", () => resolve(false));
  });
}

const missing = [];
for (const service of services) if (!(await reachable(service.url))) missing.push(service);
if (missing.length > 0) {
  for (const s of missing) {
    console.error(`✗ ${s.name} is not reachable at ${s.url}. The test suite runs against a real ${s.name}.`);
    console.error(`  Start it (e.g. \`${s.start}\`) or point ${s.name === "Redis" ? "TEST_REDIS_URL" : "TEST_DATABASE_URL"} at one.`);
  }
  process.exit(1);
}
// Debian packages the tests drive: Chromium (the dashboard's browser test, a real headless one)
// and tini (the image's PID 1, which the deployment's process test runs). As root with apt-get,
// install what is missing, as .ci/run does; otherwise (or with REWIND_NO_APT=1) stop at once
// with the command to run.
const chromium = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
const packages = [
  { name: "chromium", path: chromium, why: "the dashboard's browser test drives one", env: "CHROMIUM_PATH" },
  { name: "tini", path: "/usr/bin/tini", why: "the image's entrypoint, which the deployment's process test runs" },
].filter((p) => !existsSync(p.path));
if (packages.length > 0) {
  const names = packages.map((p) => p.name).join(" ");
  const command = `apt-get install -y --no-install-recommends ${names}`;
  const { spawnSync } = await import("node:child_process");
  const canInstall =
    process.getuid?.() === 0 && process.env.REWIND_NO_APT !== "1" && spawnSync("apt-get", ["--version"], { stdio: "ignore" }).status === 0;
  if (!canInstall) {
    for (const p of packages)
      console.error(`✗ No ${p.name} at ${p.path}: ${p.why}.${p.env ? ` (Or point ${p.env} at one.)` : ""}`);
    console.error(`  Install ${packages.length > 1 ? "them" : "it"} as root: \`apt-get update && ${command}\``);
    process.exit(1);
  }
  console.log(`Installing ${names} with apt-get (the tests drive ${packages.length > 1 ? "them" : "it"})…`);
  const env = { ...process.env, DEBIAN_FRONTEND: "noninteractive" };
  for (const args of [["update"], command.split(" ").slice(1)]) {
    const step = spawnSync("apt-get", args, { stdio: "inherit", env });
    if (step.status !== 0) {
      console.error(`✗ \`apt-get ${args.join(" ")}\` failed: install ${names} by hand (\`${command}\`) and run npm test again.`);
      process.exit(1);
    }
  }
}
// The metrics test: a real Prometheus scrapes a cluster; promtool lints every /metrics.
for (const binary of ["/usr/bin/prometheus", "/usr/bin/promtool"]) {
  if (!existsSync(binary)) {
    console.error(`✗ No ${binary}: the metrics test scrapes a cluster with a real Prometheus and lints /metrics with promtool.`);
    console.error("  Install Debian's package (`apt-get install -y --no-install-recommends prometheus`, as .ci/run does).");
    process.exit(1);
  }
}
const { missingTools } = await import("./install-tools.mjs");
if (missingTools().length > 0) {
  const { spawnSync } = await import("node:child_process");
  console.log(`Installing the test tools (${missingTools().join(", ")}) with Go, once…`);
  const install = spawnSync(process.execPath, [new URL("./install-tools.mjs", import.meta.url).pathname], { stdio: "inherit" });
  if (install.status !== 0) process.exit(1);
}
console.log(`✓ PostgreSQL and Redis are reachable, Chromium is at ${chromium}, tini, Prometheus and the Go-built test tools are installed`);

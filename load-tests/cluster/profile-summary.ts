/**
 * With --cpu-prof, each child writes a V8 CPU profile when it exits. This prints, per process,
 * where its CPU went: self time by package (a Rewind lib or service, a dependency under
 * node_modules, Node's internals, GC) and the hottest functions. Profiles stay in the log folder
 * for a closer look (Chrome DevTools, speedscope).
 */
import { readFileSync, readdirSync } from "node:fs";
import path from "node:path";

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  hitCount?: number;
}

interface CpuProfile {
  /** Monotonic clock, µs: comparable with process.hrtime.bigint() / 1000 in the harness. */
  startTime: number;
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

/** A readable owner for a script URL: `@rewind/executor`, `bullmq`, `node internals`, … */
function packageOf(url: string, name: string): string {
  if (url === "") return name.startsWith("(") ? name : "(native)";
  if (url.startsWith("node:")) return "node internals";
  const modules = url.lastIndexOf("/node_modules/");
  if (modules >= 0) {
    const rest = url.slice(modules + 14).split("/");
    return rest[0]!.startsWith("@") ? `${rest[0]}/${rest[1]}` : rest[0]!;
  }
  const ours = /\/(libs|services)\/([^/]+)\//.exec(url);
  if (ours) return `rewind ${ours[1]}/${ours[2]}`;
  return path.basename(url);
}

function top<K>(totals: Map<K, number>, n: number): [K, number][] {
  return [...totals].sort((a, b) => b[1] - a[1]).slice(0, n);
}

/** A stretch of a run to look at: a workload's measured part (monotonic clock, µs). */
export interface ProfileWindow {
  label: string;
  fromUs: number;
  toUs: number;
}

/** Now on the clock the profiles use. */
export const monotonicUs = (): number => Number(process.hrtime.bigint() / 1000n);

/**
 * Summarises one profile (or the samples inside `window`): sampled busy time, and the heaviest
 * packages and functions by self time. On a busy machine "busy" also counts time the process was
 * runnable but waiting for a core, charged to whatever it was doing (often a syscall).
 */
export function summarizeProfile(
  profile: CpuProfile,
  window?: ProfileWindow,
  packages = 8,
  functions = 12,
): string {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const self = new Map<number, number>();
  let at = profile.startTime;
  profile.samples.forEach((id, i) => {
    const dt = profile.timeDeltas[i] ?? 0;
    at += dt;
    if (window && (at < window.fromUs || at > window.toUs)) return;
    self.set(id, (self.get(id) ?? 0) + dt);
  });
  const byPackage = new Map<string, number>();
  const byFunction = new Map<string, number>();
  let all = 0;
  let idle = 0;
  for (const [id, us] of self) {
    const { functionName, url, lineNumber } = byId.get(id)!.callFrame;
    if (functionName === "(idle)") {
      idle += us;
      continue;
    }
    all += us;
    const pkg = packageOf(url, functionName);
    byPackage.set(pkg, (byPackage.get(pkg) ?? 0) + us);
    const where = url === "" ? "" : ` ${path.basename(url)}:${lineNumber + 1}`;
    const fn = `${functionName || "(anonymous)"}${where} [${pkg}]`;
    byFunction.set(fn, (byFunction.get(fn) ?? 0) + us);
  }
  const pct = (us: number) => `${((100 * us) / all).toFixed(1)}%`;
  const lines = [
    `busy ${(all / 1e6).toFixed(1)} s sampled (idle ${(idle / 1e6).toFixed(1)} s)`,
    `by package: ${top(byPackage, packages)
      .map(([p, us]) => `${p} ${pct(us)}`)
      .join(", ")}`,
    "hottest functions (self time):",
    ...top(byFunction, functions).map(([f, us]) => `  ${pct(us).padStart(6)} ${f}`),
  ];
  return lines.join("\n");
}

/**
 * Prints a summary of every profile in `dir`, named by the child whose pid wrote it: for each
 * window it covers, or for its whole life when no window is given.
 */
export function printProfiles(
  dir: string,
  names: ReadonlyMap<number, string>,
  windows: readonly ProfileWindow[],
): void {
  let files: string[];
  try {
    files = readdirSync(dir).filter((f) => f.endsWith(".cpuprofile"));
  } catch {
    return;
  }
  for (const file of files.sort()) {
    const pid = Number(file.split(".")[3]); // CPU.<date>.<time>.<pid>.<thread>.<seq>.cpuprofile
    const name = names.get(pid) ?? `pid ${pid}`;
    let profile: CpuProfile;
    try {
      profile = JSON.parse(readFileSync(path.join(dir, file), "utf8")) as CpuProfile;
    } catch (error) {
      console.log(`\n[cpu profile] ${name}: unreadable: ${(error as Error).message}`);
      continue;
    }
    const end = profile.startTime + profile.timeDeltas.reduce((a, b) => a + b, 0);
    const inside = windows.filter((w) => w.toUs > profile.startTime && w.fromUs < end);
    for (const window of inside.length > 0 ? inside : [undefined]) {
      console.log(
        `\n[cpu profile] ${name}, ${window ? window.label : "whole life"} (${path.join(dir, file)})`,
      );
      console.log(summarizeProfile(profile, window));
    }
  }
}

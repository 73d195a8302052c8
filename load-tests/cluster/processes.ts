/**
 * The harness's child processes: each `rewind` command runs as a node process of its own (the
 * built CLI, libs/cli/dist), its output written to a log file with the last lines kept for error
 * messages. Long-lived children wear a leash (leash.mjs) so they stop even when the harness is
 * killed with SIGKILL; on any ordinary exit of the harness every child is killed.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { createWriteStream, existsSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
export const CLI = path.join(ROOT, "libs/cli/dist/main.js");
const LEASH = fileURLToPath(new URL("./leash.mjs", import.meta.url));
const TAIL_LINES = 40;

/** Every child still running, killed with SIGKILL when this process exits for any reason. */
const running = new Set<ChildProcess>();
process.on("exit", () => {
  for (const child of running) child.kill("SIGKILL");
});

export function assertBuilt(): void {
  if (!existsSync(CLI))
    throw new Error(`${CLI} is missing: build first (cd /work/main && npx turbo run build)`);
}

export interface Child {
  readonly name: string;
  readonly pid: number;
  readonly logFile: string;
  /** Resolves with the exit code (or the signal's name) once the process is gone. */
  readonly exited: Promise<number | string>;
  readonly alive: boolean;
  /** The last lines it wrote, for error messages. */
  tail(): string;
  /** The first line of its output so far (the last 40 lines) that matches `pattern`. */
  find(pattern: RegExp): RegExpExecArray | undefined;
  /** Waits for a line of its output matching `pattern`; fails if it exits or time runs out. */
  waitFor(pattern: RegExp, timeoutMs: number): Promise<void>;
}

export interface LaunchOptions {
  env: NodeJS.ProcessEnv;
  logDir: string;
  /** Extra node flags (e.g. --cpu-prof). */
  nodeArgs?: readonly string[];
}

/** Starts `rewind <args>` as a long-lived, leashed child. */
export function launch(name: string, args: readonly string[], options: LaunchOptions): Child {
  const logFile = path.join(options.logDir, `${name}.log`);
  const log = createWriteStream(logFile, { flags: "a" });
  const child = spawn(
    process.execPath,
    [...(options.nodeArgs ?? []), "--import", LEASH, CLI, ...args],
    { cwd: ROOT, env: options.env, stdio: ["pipe", "pipe", "pipe"] },
  );
  if (child.pid === undefined)
    throw new Error(`could not start ${name} (rewind ${args.join(" ")})`);
  running.add(child);
  const lines: string[] = [];
  const watchers = new Set<(line: string) => void>();
  let partial = "";
  const onData = (data: Buffer) => {
    log.write(data);
    const text = partial + data.toString();
    const parts = text.split("\n");
    partial = parts.pop()!;
    for (const line of parts) {
      lines.push(line);
      if (lines.length > TAIL_LINES) lines.shift();
      for (const watch of watchers) watch(line);
    }
  };
  child.stdout!.on("data", onData);
  child.stderr!.on("data", onData);
  let alive = true;
  const exited = new Promise<number | string>((resolve) =>
    child.once("exit", (code, signal) => {
      alive = false;
      running.delete(child);
      log.end();
      resolve(code ?? signal ?? "unknown");
    }),
  );
  const tail = () => [...lines, partial].filter((l) => l !== "").join("\n");
  return {
    name,
    pid: child.pid,
    logFile,
    exited,
    get alive() {
      return alive;
    },
    tail,
    find(pattern) {
      for (const line of lines) {
        const match = pattern.exec(line);
        if (match) return match;
      }
      return undefined;
    },
    waitFor(pattern, timeoutMs) {
      if (lines.some((l) => pattern.test(l))) return Promise.resolve();
      return new Promise<void>((resolve, reject) => {
        const done = (error?: Error) => {
          watchers.delete(watch);
          clearTimeout(timer);
          if (error) reject(error);
          else resolve();
        };
        const watch = (line: string) => pattern.test(line) && done();
        watchers.add(watch);
        const timer = setTimeout(
          () =>
            done(
              new Error(
                `${name} did not print ${pattern} within ${timeoutMs / 1000} s:\n${tail()}`,
              ),
            ),
          timeoutMs,
        );
        void exited.then((code) =>
          done(new Error(`${name} exited (${code}) before printing ${pattern}:\n${tail()}`)),
        );
      });
    },
  };
}

/**
 * SIGTERM (graceful: a worker hands its hot runs back), then SIGKILL after `graceMs`. `hung`:
 * the leash had to end it (its shutdown finished, but the process would not exit by itself).
 */
export async function stop(
  child: Child,
  graceMs = 15_000,
): Promise<{ graceful: boolean; hung: boolean }> {
  const hung = () => child.find(/^\[leash\] still running/) !== undefined;
  if (!child.alive) return { graceful: true, hung: hung() };
  process.kill(child.pid, "SIGTERM");
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<"late">(
    (resolve) => (timer = setTimeout(() => resolve("late"), graceMs)),
  );
  const first = await Promise.race([child.exited, late]);
  clearTimeout(timer);
  if (first !== "late") return { graceful: !hung(), hung: hung() };
  if (child.alive) process.kill(child.pid, "SIGKILL");
  await child.exited;
  return { graceful: false, hung: hung() };
}

/** Kills every child at once (SIGKILL): for failures and interrupts. */
export function killAll(): void {
  for (const child of running) child.kill("SIGKILL");
}

/** A benchmark's start: the CLI must be built, and ^C kills every process it started. */
export function startBench(): void {
  assertBuilt();
  process.once("SIGINT", () => {
    killAll();
    process.exit(130);
  });
}

/** Runs `rewind <args>` to its end (migrate, token create), failing after `timeoutMs`. */
export function runCli(
  args: readonly string[],
  env: NodeJS.ProcessEnv,
  timeoutMs = 60_000,
): Promise<{ stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, ...args], {
      cwd: ROOT,
      env,
      stdio: ["ignore", "pipe", "pipe"],
    });
    running.add(child);
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    let late = false;
    const timer = setTimeout(() => {
      late = true;
      child.kill("SIGKILL");
    }, timeoutMs);
    child.once("error", reject);
    child.once("exit", (code, signal) => {
      clearTimeout(timer);
      running.delete(child);
      if (code === 0) resolve({ stdout, stderr });
      else
        reject(
          new Error(
            `rewind ${args.join(" ")} ${late ? `took more than ${timeoutMs / 1000} s` : `exited ${code ?? signal}`}:\n${stdout}${stderr}`,
          ),
        );
    });
  });
}

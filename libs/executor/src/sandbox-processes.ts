import { fork, type ChildProcess } from "node:child_process";
import { createHash } from "node:crypto";
import { getPriority, setPriority } from "node:os";
import { fileURLToPath } from "node:url";
import { RewindError, type GuestCommand, type GuestEvent, type Json } from "@rewind/core";
import {
  Sandbox,
  SandboxLost,
  type CompiledScript,
  type InstantiateOptions,
  type SandboxOptions,
  type ScriptHandle,
  type ScriptSandbox,
} from "@rewind/sandbox";
import { errorFrom, plain } from "./replay-pool.js";
import type { ChildReply, ChildRequest } from "./sandbox-wire.js";

export interface SandboxProcessesOptions {
  /** Sandbox processes in the pool (default 1); a run stays in the one it started in. */
  processes?: number;
  /** Limits of each process's sandbox (it runs in sync mode: the process does nothing else). */
  sandbox?: Omit<SandboxOptions, "mode">;
  /**
   * How much lower the processes' CPU priority is than this process's: a nice increment, 0 to 19
   * (default SANDBOX_NICE).
   */
  nice?: number;
  /** A sandbox process died; `runId` is the run that was executing, if one was. */
  onExit?: (why: string, runId: string | undefined, lostRuns: number) => void;
}

/**
 * The sandbox processes' default nice increment. Scripts' CPU yields to the processes that answer
 * clients and move runs on (the worker's event loop, and the API and Postgres where they share the
 * machine): under more load than the machine can execute, those stay responsive while scripts
 * wait. 4 kept most of that gain in the open-loop benchmark at no cost to throughput where every
 * process is busy; 10 cost 9% of it (figures: services/worker/HOW_IT_WORKS.md).
 */
export const SANDBOX_NICE = 4;

/**
 * Scripts in supervised child processes, so that an abort costs only the runs of that process and
 * never the one serving them (`rewind dev`, `rewind worker`): isolated-vm's memory limit is a
 * guideline, and one huge allocation makes V8 abort the whole process it runs in. A child that
 * dies fails every request and instance it had with SandboxLost, naming the run that was
 * executing at that moment (the child takes requests one at a time, in order, so that is the
 * oldest one unanswered); the executor charges that run alone and loads the others again, in a
 * new child started on the next instantiate.
 *
 * The hop costs one IPC round trip per activation (a tool call's outcome in, its commands out);
 * requests of different runs are pipelined, and a child keeps its contexts hot between them.
 */
export class SandboxProcesses implements ScriptSandbox {
  readonly options: Required<SandboxOptions>;
  readonly supervised = true;
  private readonly children: SandboxChild[];

  constructor(private readonly settings: SandboxProcessesOptions = {}) {
    const count = settings.processes ?? 1;
    if (!Number.isInteger(count) || count < 1 || count > 64)
      throw new RewindError(
        "INVALID_INPUT",
        `A pool of sandbox processes needs 1 to 64 of them, got ${count}: leave it unset for one`,
      );
    const nice = settings.nice ?? SANDBOX_NICE;
    if (!Number.isInteger(nice) || nice < 0 || nice > 19)
      throw new RewindError(
        "INVALID_INPUT",
        `The sandbox processes' nice increment must be a whole number from 0 to 19, got ${nice}: leave it unset for ${SANDBOX_NICE}`,
      );
    // The limits as a sandbox would apply them (no isolate is made here).
    this.options = { ...new Sandbox(settings.sandbox).options, mode: "sync" };
    this.children = Array.from({ length: count }, () => new SandboxChild(this.options, settings));
  }

  instantiate(script: CompiledScript, run: InstantiateOptions): Promise<ScriptHandle> {
    // The child with the fewest live runs takes the new one.
    let child = this.children[0]!;
    for (const other of this.children) if (other.liveRuns < child.liveRuns) child = other;
    return child.instantiate(script, run);
  }

  /**
   * Starts every sandbox process now, so that the first runs after a start (a restart's recovery
   * of every open run) do not each wait for a process to boot and build the guest runtime.
   */
  warm(): void {
    for (const child of this.children) child.warm();
  }

  heapUsedBytes(): number {
    return this.children.reduce((sum, child) => sum + child.heapBytes, 0);
  }

  get liveRuns(): number {
    return this.children.reduce((sum, child) => sum + child.liveRuns, 0);
  }

  /** The processes' ids (tests, diagnostics): undefined where none runs now. */
  get pids(): (number | undefined)[] {
    return this.children.map((child) => child.pid);
  }

  dispose(): void {
    for (const child of this.children) child.close();
  }
}

interface Pending {
  inst: RemoteInstance | undefined;
  resolve(commands: GuestCommand[] | null): void;
  reject(error: unknown): void;
}

/** One supervised child: started on first use and again after one ended. */
class SandboxChild {
  private process: ChildProcess | undefined;
  private readonly pending = new Map<number, Pending>();
  private readonly instances = new Set<RemoteInstance>();
  /** Script keys (see scriptKey) the current process has the script of. */
  private readonly scripts = new Set<string>();
  private nextId = 1;
  private nextInst = 1;
  private stderrTail = "";
  /** What the child wrote to stderr and has not been passed on yet (see host()). */
  private unsaid = "";
  private saySoon: NodeJS.Timeout | undefined;
  private closed = false;
  heapBytes = 0;

  constructor(
    private readonly options: Required<SandboxOptions>,
    private readonly settings: SandboxProcessesOptions,
  ) {}

  get liveRuns(): number {
    return this.instances.size;
  }

  get pid(): number | undefined {
    return this.process?.pid;
  }

  /**
   * The instance at once, its context on the way: the run's first request (its start) follows
   * the instantiate down the same pipe, and the child takes them in order, so a new run's start
   * costs one round trip, not two. A failed instantiate is what that first request throws.
   */
  async instantiate(script: CompiledScript, run: InstantiateOptions): Promise<ScriptHandle> {
    if (this.closed)
      throw new RewindError("UNAVAILABLE", "The sandbox processes were closed: the server stops");
    const child = this.host();
    const instance = new RemoteInstance(this, child, this.nextInst++, run.runId);
    const key = scriptKey(script);
    const known = this.scripts.has(key);
    this.scripts.add(key);
    this.instances.add(instance);
    instance.ready = this.request(instance, {
      op: "instantiate",
      inst: instance.inst,
      script: known ? { key } : { key, compiled: plain(script) },
      run,
    }).then(
      () => {},
      (error: unknown) => {
        this.instances.delete(instance);
        throw error;
      },
    );
    instance.ready.catch(() => {}); // thrown by the instance's first request, if one is made
    return instance;
  }

  request(
    inst: RemoteInstance,
    body:
      | Omit<Extract<ChildRequest, { op: "instantiate" }>, "id">
      | { op: "start"; inst: number; input: Json }
      | { op: "deliver"; inst: number; event: GuestEvent },
  ): Promise<GuestCommand[] | null> {
    const child = this.process;
    if (child === undefined || inst.lost !== undefined || child !== inst.process)
      return Promise.reject(inst.lost ?? new SandboxLost(inst.runId, false, "it was replaced"));
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { inst, resolve, reject });
      child.send({ ...body, id });
    });
  }

  post(inst: RemoteInstance, body: ChildRequest): void {
    if (inst.lost === undefined && this.process === inst.process && this.process !== undefined)
      this.process.send(body);
  }

  forget(inst: RemoteInstance): void {
    this.instances.delete(inst);
  }

  warm(): void {
    if (!this.closed) this.host();
  }

  close(): void {
    this.closed = true;
    this.process?.kill("SIGKILL");
  }

  private host(): ChildProcess {
    if (this.process !== undefined) return this.process;
    const fromSource = import.meta.url.endsWith(".ts");
    const child = fork(
      fileURLToPath(
        new URL(fromSource ? "./sandbox-child.ts" : "./sandbox-child.js", import.meta.url),
      ),
      [],
      {
        // JSON: everything that crosses is JSON already (events enter the guest as JSON text and
        // its commands leave as JSON text), and Node's JSON channel cost a sandbox process about a
        // third less CPU a run than the structured-clone one ("advanced") did.
        serialization: "json",
        stdio: ["ignore", "inherit", "pipe", "ipc"],
        // From source (vitest), the child loads TypeScript as the replay threads do.
        execArgv: fromSource
          ? [
              "--conditions=@rewind/source",
              "--import",
              fileURLToPath(new URL("./worker-source/register.mjs", import.meta.url)),
            ]
          : [],
      },
    );
    // The end kept, for V8's last words name the cause of a death (describeDeath puts its fatal
    // line in the death's record, which the supervisor logs). What a child writes is passed on
    // once it proves no such report: a moment later with the child alive, so the page of GC
    // traces and native stack V8 writes as it aborts does not reach the log (or a test's output).
    child.stderr!.on("data", (chunk: Buffer) => {
      this.stderrTail = (this.stderrTail + chunk.toString()).slice(-4096);
      this.unsaid += chunk.toString();
      this.saySoon ??= setTimeout(() => this.passOnStderr(child), STDERR_GRACE_MS);
    });
    // Relative to this process's (an unprivileged process may only lower a priority).
    try {
      setPriority(child.pid!, Math.min(19, getPriority() + (this.settings.nice ?? SANDBOX_NICE)));
    } catch {
      // It is gone already (no pid, or it died at once): its close says why.
    }
    child.on("message", (reply: ChildReply) => this.settle(reply));
    // `close`, not `exit`: stderr has been read to its end by then.
    child.on("close", (code, signal) => this.lost(child, code, signal));
    child.on("error", () => {}); // a failed send shows as the close that follows
    child.send({ op: "options", options: this.options } satisfies ChildRequest);
    this.process = child;
    this.scripts.clear();
    this.stderrTail = "";
    return child;
  }

  private passOnStderr(child: ChildProcess): void {
    this.saySoon = undefined;
    if (this.process === child && child.exitCode === null && child.signalCode === null)
      process.stderr.write(this.unsaid);
    this.unsaid = "";
  }

  private settle(reply: ChildReply): void {
    if (reply.heap !== undefined) this.heapBytes = reply.heap;
    const waiting = this.pending.get(reply.id);
    if (waiting === undefined) return;
    this.pending.delete(reply.id);
    if ("ok" in reply) waiting.resolve(reply.ok);
    else if (reply.evicted === true)
      waiting.reject(new SandboxLost(waiting.inst?.runId, false, "its isolate was lost"));
    else waiting.reject(errorFrom(reply.error));
  }

  /** The child ended: the oldest request unanswered was executing; everything of it is lost. */
  private lost(child: ChildProcess, code: number | null, signal: NodeJS.Signals | null): void {
    if (this.process !== child) return;
    this.process = undefined;
    this.heapBytes = 0;
    clearTimeout(this.saySoon); // its last words are in `why`, not on stderr
    this.saySoon = undefined;
    this.unsaid = "";
    const why = this.closed
      ? "the sandbox processes were closed"
      : describeDeath(code, signal, this.stderrTail);
    let executing: string | undefined;
    let first = true;
    for (const waiting of this.pending.values()) {
      const charged = first && !this.closed;
      if (charged) executing = waiting.inst?.runId;
      first = false;
      waiting.reject(new SandboxLost(waiting.inst?.runId, charged, why));
    }
    this.pending.clear();
    const lostRuns = this.instances.size;
    for (const instance of this.instances)
      instance.markLost(new SandboxLost(instance.runId, false, why));
    this.instances.clear();
    if (!this.closed) this.settings.onExit?.(why, executing, lostRuns);
  }
}

/** A run's instance in a child: every call is a request over IPC. */
class RemoteInstance implements ScriptHandle {
  private lostTo: SandboxLost | undefined;
  private disposed = false;
  /** Its instantiate's answer, until a request has waited for it. */
  ready: Promise<void> | undefined;

  constructor(
    private readonly child: SandboxChild,
    readonly process: ChildProcess,
    readonly inst: number,
    readonly runId: string | undefined,
  ) {}

  /**
   * Why its requests fail now: its process ended, or it was disposed. The error is made when first
   * asked for: every run is disposed, and an error's stack costs more than the rest of a dispose.
   */
  get lost(): SandboxLost | undefined {
    if (this.lostTo === undefined && this.disposed)
      this.lostTo = new SandboxLost(this.runId, false, "its instance was disposed");
    return this.lostTo;
  }

  /** Its process ended: `error` is what its requests fail with from now on. */
  markLost(error: SandboxLost): void {
    this.lostTo ??= error;
  }

  async start(input: Json): Promise<GuestCommand[]> {
    return this.ask({ op: "start", inst: this.inst, input });
  }

  async deliver(event: GuestEvent): Promise<GuestCommand[]> {
    return this.ask({ op: "deliver", inst: this.inst, event });
  }

  /**
   * Sent at once, behind the instantiate if that is still on its way; its failure, if it failed,
   * is this request's (the child then answers this one "no instance", which says less).
   */
  private async ask(
    body:
      | { op: "start"; inst: number; input: Json }
      | { op: "deliver"; inst: number; event: GuestEvent },
  ): Promise<GuestCommand[]> {
    const answer = this.child.request(this, body);
    if (this.ready !== undefined) {
      answer.catch(() => {});
      await this.ready;
      this.ready = undefined;
    }
    return (await answer) ?? [];
  }

  captureCallsites(on: boolean): void {
    // Queued in the child ahead of the next activation: messages keep their order.
    this.child.post(this, { op: "callsites", inst: this.inst, on });
  }

  dispose(): void {
    this.child.post(this, { op: "dispose", inst: this.inst });
    this.child.forget(this);
    this.disposed = true;
  }
}

/** How a child ended, in words, with V8's fatal line when it left one. */
function describeDeath(code: number | null, signal: NodeJS.Signals | null, stderr: string): string {
  const how = signal !== null ? `was killed (${signal})` : `exited with code ${code}`;
  const fatal = stderr
    .split("\n")
    .map((line) => line.trim())
    .filter((line) =>
      /fatal|out of memory|allocation failed|invalid (array|table|string)/i.test(line),
    )
    .at(-1);
  // Without a fatal line, V8's heap report (GC traces, heap statistics) still says what ran out.
  const said =
    fatal !== undefined
      ? `, saying "${fatal.slice(0, 200)}"`
      : /is_heap_oom = 1/.test(stderr)
        ? ", V8 reporting the isolate's heap out of memory"
        : "";
  return (
    `its sandbox process ${how}${said}: V8 aborts a process when one allocation cannot fit ` +
    `in the isolate's memory limit, so the script most likely allocated far too much at once`
  );
}

/** How long a child's stderr is held back, to tell a report written as it aborts from the rest. */
const STDERR_GRACE_MS = 250;

const scriptKeys = new WeakMap<CompiledScript, string>();

/**
 * What a sandbox child caches a script by: its code hash alone would give one tenant's run the
 * source map (and so the callsites) another tenant uploaded with the same code. Memoized per
 * object: the executor keeps one per namespace and hash.
 */
function scriptKey(script: CompiledScript): string {
  let key = scriptKeys.get(script);
  if (key === undefined) {
    const map = createHash("sha256").update(script.sourceMap).update("\0").update(script.entry);
    key = `${script.hash}+${map.digest("hex").slice(0, 32)}`;
    scriptKeys.set(script, key);
  }
  return key;
}

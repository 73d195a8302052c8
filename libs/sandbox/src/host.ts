/**
 * The one file that touches isolated-vm. Runs share isolates, a context each: a context costs
 * about 0.2 MB and 0.5 ms where an isolate costs 1.1 MB and 5 ms (docs/sandbox.md has the
 * trade-off). The script never holds a reference to anything here: the host calls into the guest
 * runtime's `deliver` and `collect` and exchanges only strings.
 */
import type ivm from "isolated-vm";
import {
  RewindError,
  type ErrorData,
  type GuestCommand,
  type GuestEvent,
  type Json,
} from "@rewind/core";
import { parseCommands, eventToWire } from "./commands.js";
import type { CompiledScript } from "./compiler.js";
import { loadIsolatedVm } from "./engine.js";
import { ExternalMemory, type ExternalVerdict } from "./external-memory.js";
import { assertProcessZoneIsUtc } from "./process-zone.js";
import { SCRIPT_FILE } from "./guest/callsite.js";
import { guestBundle, guestUsesProcessZone } from "./guest-bundle.js";
import { newRunEpoch } from "./epochs.js";
import { SourceMapper } from "./source-map.js";
import type { InstantiateOptions, ScriptSandbox } from "./script-sandbox.js";

export interface SandboxOptions {
  /** Heap limit of each isolate, in MiB. A run that exceeds it fails with MEMORY_LIMIT. */
  memoryLimitMb?: number;
  /** CPU (wall) time one activation may take before the run fails with CPU_LIMIT. */
  cpuLimitMs?: number;
  /** Largest JSON value that may cross the wall, in bytes. */
  maxValueBytes?: number;
  /** How many runs share one isolate. */
  runsPerIsolate?: number;
  /**
   * `sync` runs script code on the calling thread (fastest: in-process tools, tests, `exec`);
   * `async` runs it on isolated-vm's threads so the host event loop keeps serving (services).
   */
  mode?: "sync" | "async";
  /**
   * In async mode, replayed batches (commands only checked against the journal) of instances
   * made with `fastReplay` run synchronously in slices of at most this many ms: a cold replay is
   * then about ten times faster, and the event loop is never held longer than one slice.
   */
  replaySliceMs?: number;
  /**
   * In async mode, live activations of instances made with `liveSlices` run synchronously, on an
   * idle isolate, for at most this many ms: a tool call's round trip saves two thread hops. One
   * that runs longer is stopped mid-way (LiveSliceExceeded): nothing of it escaped, and the
   * caller rebuilds the run from its journal and delivers the event again, async.
   */
  liveSliceMs?: number;
  /**
   * TEST ONLY: JavaScript evaluated in each run's context after the runtime and before the
   * script, to play a platform bug (a global that returns something else than it did when the
   * run was recorded) in tests of divergence and quarantine. Only the host's own options set it:
   * no script can reach it. Never set it in a service.
   */
  testOnlyPlatformBug?: string;
  /**
   * Holds each run's memory outside the heaps (WebAssembly memories, which isolated-vm's limit
   * never sees) to `memoryLimitMb` too, and the process's to that times its live runs, estimated
   * from the process's resident size and charged to the run that grew it (external-memory.ts);
   * disposes an isolate a run leaves such memory behind in. Only for a process that does nothing
   * but run scripts, in sync mode: a sandbox process.
   */
  guardExternalMemory?: boolean;
}

/**
 * A replay slice ran out of time: not the run's fault (its CPU limit is longer), but the context
 * was stopped mid-way. Replay again without `fastReplay`; nothing is lost (replay is pure).
 */
export class ReplaySliceExceeded extends RewindError {
  override readonly name: string = "ReplaySliceExceeded";
  constructor(sliceMs: number) {
    super(
      "UNAVAILABLE",
      `A replay activation took more than the ${sliceMs} ms slice: replay again in async mode`,
    );
  }
}

/**
 * A live slice ran out of time: the context was stopped in the middle of an activation whose
 * commands were not yet collected, let alone journaled. The instance is unusable; rebuild the run
 * from its journal (async this time) and deliver the event again.
 */
export class LiveSliceExceeded extends ReplaySliceExceeded {
  override readonly name = "LiveSliceExceeded";
  constructor(sliceMs: number) {
    super(sliceMs);
    this.message = `A live activation took more than the ${sliceMs} ms slice: rebuild the run and deliver it again, async`;
  }
}

const DEFAULTS: Required<SandboxOptions> = {
  memoryLimitMb: 128,
  cpuLimitMs: 1000,
  maxValueBytes: 4 * 1024 * 1024,
  runsPerIsolate: 256,
  mode: "sync",
  replaySliceMs: 50,
  liveSliceMs: 20,
  testOnlyPlatformBug: "",
  guardExternalMemory: false,
};

const MIB = 1024 * 1024;
/** Memory outside the heaps left after a run ends, from which its isolate is disposed to free it. */
const LEFT_BEHIND_BYTES = 32 * MIB;

class IsolateSlot {
  readonly isolate: ivm.Isolate;
  /** Each epoch's guest runtime, compiled on this isolate when a run of that epoch first needs it. */
  private readonly runtimes = new Map<number, ivm.Script>();
  readonly scripts = new Map<string, ivm.Script>();
  readonly instances = new Set<ScriptInstance>();
  admitted = 0;
  /**
   * Async calls in flight on this isolate. While one is, a sync call would wait for the isolate's
   * lock, holding the host's event loop as long as another run's script computes: every call then
   * goes async. When the isolate is idle, a short sync call (no script code) is the fast path.
   */
  busy = 0;
  heapUsed = 0;
  /**
   * Runs admitted whose context is still being made (not yet in `instances`): the isolate must
   * not be retired under them, or their context creation meets a disposed isolate.
   */
  starting = 0;
  /** The next run's context, made ahead of it (Sandbox.prepare); undefined if that failed. */
  private blank: { epoch: number; context: Promise<BlankContext | undefined> } | undefined;

  constructor(memoryLimitMb: number) {
    this.isolate = new (loadIsolatedVm().Isolate)({ memoryLimit: memoryLimitMb });
  }

  runtime(epoch: number): ivm.Script {
    let runtime = this.runtimes.get(epoch);
    if (runtime === undefined) {
      runtime = this.isolate.compileScriptSync(guestBundle(epoch).code, {
        filename: "rewind-runtime.js",
      });
      this.runtimes.set(epoch, runtime);
    }
    return runtime;
  }

  get hasBlank(): boolean {
    return this.blank !== undefined;
  }

  putBlank(epoch: number, context: Promise<BlankContext | undefined>): void {
    this.blank = { epoch, context };
  }

  /**
   * The context made ahead, if it runs `epoch`'s guest runtime: each is one run's only. One of
   * another epoch is dropped (the next run is most likely of the epoch the last one was).
   */
  async takeBlank(epoch: number): Promise<BlankContext | undefined> {
    const blank = this.blank;
    this.blank = undefined;
    if (blank === undefined) return undefined;
    if (blank.epoch === epoch) return blank.context;
    (await blank.context)?.context.release();
    return undefined;
  }

  async script(compiled: CompiledScript, mode: SandboxMode): Promise<ivm.Script> {
    let script = this.scripts.get(compiled.hash);
    if (script === undefined) {
      const options = { filename: SCRIPT_FILE };
      script = await this.use(
        mode,
        () => this.isolate.compileScriptSync(compiled.code, options),
        () => this.isolate.compileScript(compiled.code, options),
      );
      this.scripts.set(compiled.hash, script);
    }
    return script;
  }

  /**
   * Runs `sync` on this isolate when that cannot block the event loop, else `async`. Answers
   * the value itself on the sync path: awaiting it there would cost a needless microtask hop.
   */
  use<T>(mode: SandboxMode, sync: () => T, async: () => Promise<T>): T | Promise<T> {
    if (mode === "sync" || this.busy === 0) return sync();
    return this.busyWith(async);
  }

  async busyWith<T>(call: () => Promise<T>): Promise<T> {
    this.busy++;
    try {
      return await call();
    } finally {
      this.busy--;
    }
  }
}

type SandboxMode = "sync" | "async";

/** A context with the guest runtime evaluated and its entry points taken: no run's yet. */
interface BlankContext {
  context: ivm.Context;
  fns: Record<"start" | "deliver" | "collect" | "callsites" | "init", GuestFn>;
}

export class Sandbox implements ScriptSandbox {
  readonly options: Required<SandboxOptions>;
  private current: IsolateSlot | undefined;
  private readonly slots = new Set<IsolateSlot>();
  /** Source mappers by source map text. */
  private readonly mappers = new Map<string, SourceMapper>();
  private readonly external: ExternalMemory | undefined;

  /** The epoch of an instance made with none: the one new runs start in on this runtime. */
  private readonly defaultEpoch = newRunEpoch();
  /** The epoch of the last run started: the one a context made ahead is for. */
  private lastEpoch = this.defaultEpoch;
  private zoneChecked = false;

  constructor(options: SandboxOptions = {}) {
    this.options = { ...DEFAULTS, ...options };
    if (this.options.guardExternalMemory && this.options.mode === "sync")
      this.external = new ExternalMemory(
        this.options.memoryLimitMb * MIB,
        () => this.isolateBytes(),
        () => this.liveRuns,
      );
  }

  /** A new context running `script`, with the run's seed and start time; call `start` next. */
  async instantiate(script: CompiledScript, run: InstantiateOptions): Promise<ScriptInstance> {
    const epoch = run.epoch ?? this.defaultEpoch;
    // Local time inside epoch 1's runtime is the process's: it must be UTC (process-zone.ts).
    // The newer epochs' runtimes pin their zone themselves.
    if (guestUsesProcessZone(epoch) && !this.zoneChecked) {
      assertProcessZoneIsUtc();
      this.zoneChecked = true;
    }
    const slot = this.admit();
    const mode = this.options.mode;
    const on = <T>(sync: () => T, async: () => Promise<T>) => slot.use(mode, sync, async);
    let blank: BlankContext;
    try {
      this.lastEpoch = epoch;
      blank = (await slot.takeBlank(epoch)) ?? (await this.blankContext(slot, mode, epoch));
    } catch (error) {
      slot.starting--;
      this.retireIfUnused(slot);
      if (error instanceof RewindError) throw error;
      throw new RewindError(
        "SANDBOX_ERROR",
        `Could not start the script in the sandbox: ${String(error)}`,
      );
    }
    const { context, fns } = blank;
    const instance = new ScriptInstance(this, slot, context, this.mapper(script), script.entry);
    instance.fastReplay = run.fastReplay === true && this.options.mode === "async";
    instance.liveSlices = run.liveSlices === true && this.options.mode === "async";
    slot.instances.add(instance);
    slot.starting--;
    try {
      instance.bind(fns.start, fns.deliver, fns.collect, fns.callsites);
      const settings = JSON.stringify({
        at: run.startAt,
        seed: run.seed,
        maxValueBytes: this.options.maxValueBytes,
        memoryLimitMb: this.options.memoryLimitMb, // epoch 1's runtime ignores it
      });
      await on(
        () => fns.init.applySync(undefined, [settings]),
        () => fns.init.apply(undefined, [settings]),
      );
      fns.init.release();
      if (this.options.testOnlyPlatformBug !== "") {
        const bug = this.options.testOnlyPlatformBug;
        await on(
          () => slot.isolate.compileScriptSync(bug).runSync(context),
          async () => (await slot.isolate.compileScript(bug)).run(context),
        );
      }
      instance.load(await slot.script(script, mode));
    } catch (error) {
      instance.dispose();
      if (error instanceof RewindError) throw error;
      throw new RewindError(
        "SANDBOX_ERROR",
        `Could not start the script in the sandbox: ${String(error)}`,
      );
    }
    return instance;
  }

  /**
   * Makes the next run's context ahead of it, while this process is idle (the sandbox process
   * calls it after answering an activation, as the worker commits): a context with the guest
   * runtime of the last run's epoch evaluated and its entry points taken, which `instantiate` then only initialises with
   * the run's seed and time. No run's data is in it before then, and each is used once. Only in
   * sync mode, where making it cannot interleave with a run's start; a no-op when one is ready
   * or the current isolate is full (the next run goes to a new one).
   */
  prepare(): void {
    const slot = this.current;
    if (this.options.mode !== "sync" || slot === undefined || slot.isolate.isDisposed) return;
    if (slot.hasBlank || slot.admitted >= this.options.runsPerIsolate) return;
    // In sync mode every step below is synchronous: it is ready before the next message is read.
    const epoch = this.lastEpoch;
    slot.putBlank(
      epoch,
      this.blankContext(slot, "sync", epoch).catch(() => undefined), // the next run makes its own, saying why
    );
  }

  /** A context of `slot` with the guest runtime evaluated, not yet any run's. */
  private async blankContext(
    slot: IsolateSlot,
    mode: SandboxMode,
    epoch: number,
  ): Promise<BlankContext> {
    const on = <T>(sync: () => T, async: () => Promise<T>) => slot.use(mode, sync, async);
    const context = await on(
      () => slot.isolate.createContextSync(),
      () => slot.isolate.createContext(),
    );
    try {
      const timeout = this.options.cpuLimitMs;
      await on(
        () => slot.runtime(epoch).runSync(context, { timeout }),
        () => slot.runtime(epoch).run(context, { timeout }),
      );
      const global = context.global;
      const name = "__rewind_host";
      const host = await on(
        () => global.getSync(name, { reference: true }),
        () => global.get(name, { reference: true }),
      );
      // Before the script runs: it must never see these.
      await on(
        () => global.deleteSync(name),
        () => global.delete(name),
      );
      const fn = (key: string) =>
        on(
          () => host.getSync(key, { reference: true }),
          () => host.get(key, { reference: true }),
        ) as Promise<GuestFn>;
      const fns = {
        start: await fn("start"),
        deliver: await fn("deliver"),
        collect: await fn("collect"),
        callsites: await fn("callsites"),
        init: await fn("init"),
      };
      host.release();
      return { context, fns };
    } catch (error) {
      context.release();
      throw error;
    }
  }

  /** Heap in use across all isolates, in bytes. */
  heapUsedBytes(): number {
    let total = 0;
    for (const slot of this.slots) {
      // A busy isolate's lock is taken: its last reading stands in (see IsolateSlot.busy).
      if (!slot.isolate.isDisposed && slot.busy === 0)
        slot.heapUsed = slot.isolate.getHeapStatisticsSync().used_heap_size;
      total += slot.heapUsed;
    }
    return total;
  }

  get liveRuns(): number {
    let n = 0;
    for (const slot of this.slots) n += slot.instances.size;
    return n;
  }

  dispose(): void {
    for (const slot of this.slots) this.retire(slot);
    this.current = undefined;
  }

  /** @internal */
  release(slot: IsolateSlot, instance: ScriptInstance): void {
    slot.instances.delete(instance);
    // A released context's WebAssembly memory is freed only when its isolate collects it, which
    // an idle isolate may never do: disposing the isolate frees it now (its other runs replay).
    // Only for what this run grew, or once what runs left adds up (else it would count against
    // the process's ceiling, failing runs that grow): a live neighbour's memory is no reason.
    const left = this.external?.leave(instance) ?? 0;
    const unowned = this.external?.unownedBytes ?? 0;
    if ((left > LEFT_BEHIND_BYTES || unowned > LEFT_BEHIND_BYTES) && !slot.isolate.isDisposed) {
      this.lost(slot);
      return;
    }
    this.retireIfUnused(slot);
  }

  /** @internal before an activation of `instance` (see ExternalMemory). */
  beforeActivation(instance: ScriptInstance): void {
    this.external?.beforeActivation(instance);
  }

  /**
   * @internal After an activation of `instance` that began at `startedAt`: why the memory it
   * holds outside the heaps fails it, or undefined (see ExternalMemory).
   */
  externalMemoryOver(instance: ScriptInstance, startedAt: number): ExternalVerdict | undefined {
    return this.external?.afterActivation(instance, startedAt);
  }

  /** What the isolates have resident, in bytes. */
  private isolateBytes(): number {
    let total = 0;
    for (const slot of this.slots)
      if (!slot.isolate.isDisposed)
        total += slot.isolate.getHeapStatisticsSync().total_physical_size;
    return total;
  }

  /** An isolate no longer admitting runs is disposed once its last run is gone. */
  private retireIfUnused(slot: IsolateSlot): void {
    if (slot !== this.current && slot.instances.size === 0 && slot.starting === 0)
      this.retire(slot);
  }

  /** @internal the isolate died (heap limit): every run in it is evicted. */
  lost(slot: IsolateSlot): void {
    this.external?.flush(); // the unread activations charged before the size changes
    for (const instance of slot.instances) {
      instance.markEvicted();
      this.external?.leave(instance);
    }
    slot.instances.clear();
    this.retire(slot);
    if (this.current === slot) this.current = undefined;
    // What its disposal did not free is no live run's: none is charged it.
    this.external?.settle();
  }

  private admit(): IsolateSlot {
    let slot = this.current;
    if (
      slot === undefined ||
      slot.isolate.isDisposed ||
      slot.admitted >= this.options.runsPerIsolate
    ) {
      const full = slot;
      this.external?.calibrate(); // before the first isolate: the process on its own
      slot = new IsolateSlot(this.options.memoryLimitMb);
      this.slots.add(slot);
      this.current = slot;
      if (full !== undefined) this.retireIfUnused(full);
    }
    slot.admitted++;
    slot.starting++;
    return slot;
  }

  private retire(slot: IsolateSlot): void {
    this.slots.delete(slot);
    if (!slot.isolate.isDisposed) slot.isolate.dispose();
  }

  /**
   * Keyed by the source map itself, not the code's hash: two namespaces may store the same code
   * with different maps, and one's map must never label the other's callsites.
   */
  private mapper(script: CompiledScript): SourceMapper {
    let mapper = this.mappers.get(script.sourceMap);
    if (mapper === undefined) {
      mapper = new SourceMapper(script.sourceMap);
      this.mappers.set(script.sourceMap, mapper);
    }
    return mapper;
  }
}

type GuestFn = ivm.Reference<(arg?: string) => string>;

/** One run's live script: deliver an event, get back the commands it emitted. */
export class ScriptInstance {
  private startFn!: GuestFn;
  private deliverFn!: GuestFn;
  private collectFn!: GuestFn;
  private callsitesFn!: GuestFn;
  private capturing = true;
  /** @internal replayed batches may run in sync slices (see SandboxOptions.replaySliceMs). */
  fastReplay = false;
  /** @internal live activations may run in sync slices (see SandboxOptions.liveSliceMs). */
  liveSlices = false;
  private sliced = 0;
  private state: "live" | "ended" | "evicted" = "live";
  private script: ivm.Script | undefined;
  /** The highest command id seen: ids are consecutive, or the guest is lying. */
  private lastId = 0;
  /** The guest sent the run's end: nothing may follow it. */
  private finished = false;
  /**
   * Calls emitted and not yet answered. The runtime completes a run only once every call it made
   * is answered: a completion while one is out means the call was forged (its answer would be
   * journaled after the run's end).
   */
  private readonly callsOut = new Set<number>();

  constructor(
    private readonly sandbox: Sandbox,
    private readonly slot: IsolateSlot,
    private readonly context: ivm.Context,
    private readonly mapper: SourceMapper,
    readonly entry: string,
  ) {}

  /** @internal */
  bind(start: GuestFn, deliver: GuestFn, collect: GuestFn, callsites: GuestFn): void {
    this.callsitesFn = callsites;
    this.startFn = start;
    this.deliverFn = deliver;
    this.collectFn = collect;
  }

  /** @internal the script's bundle, evaluated by `start`: its top level is the run's first code. */
  load(script: ivm.Script): void {
    this.script = script;
  }

  /** True when the isolate was lost under this run (another run's heap bomb): replay it cold. */
  get evicted(): boolean {
    return this.state === "evicted";
  }

  /**
   * Evaluates the script's module (its top level may throw or loop like any code: that fails the
   * run, journaled) and calls its default export with the input.
   */
  async start(input: Json): Promise<GuestCommand[]> {
    // Its isolate went under it (another run's memory) before it started: not this run's doing.
    if (this.state === "evicted")
      throw new RewindError("SANDBOX_ERROR", "The run's sandbox was evicted: start it again");
    const script = this.script;
    if (script === undefined)
      throw new RewindError("SANDBOX_ERROR", "The run's script has already started");
    this.script = undefined;
    this.sandbox.beforeActivation(this);
    const startedAt = performance.now();
    const timeout = this.sandbox.options.cpuLimitMs;
    const mode = this.sandbox.options.mode;
    // The script's top level is script code: in async mode, sync only within a slice.
    const slice = this.sliceMs();
    const failure = await this.guard(async () => {
      if (slice > 0) script.runSync(this.context, { timeout: slice });
      else if (mode === "sync") script.runSync(this.context, { timeout });
      else await this.slot.busyWith(() => script.run(this.context, { timeout }));
      const global = this.context.global;
      await this.slot.use(
        mode,
        () => global.deleteSync("__rewind_register"),
        () => global.delete("__rewind_register"),
      );
    });
    if (failure !== undefined) {
      this.throwIfSliceRanOut(slice, failure);
      return [{ type: "fail", error: failure }];
    }
    return this.activate(this.startFn, JSON.stringify(input), startedAt);
  }

  deliver(event: GuestEvent): Promise<GuestCommand[]> {
    if (event.type === "call.result" || event.type === "call.error") this.callsOut.delete(event.id);
    return this.activate(this.deliverFn, eventToWire(event));
  }

  /**
   * Turns callsite capture on or off (a stack capture per command). The replay engine turns it off
   * for batches it only checks against recorded entries, which carry their callsites already; the
   * host takes "off" to mean "replaying", and may run those batches in fast sync slices.
   */
  captureCallsites(on: boolean): void {
    if (on === this.capturing || this.state !== "live") return;
    this.capturing = on;
    const arg: [string] = [on ? "1" : "0"];
    // When async, it is queued on the isolate ahead of the next activation (calls keep order).
    const done = this.slot.use(
      this.sandbox.options.mode,
      () => this.callsitesFn.applySync(undefined, arg),
      () => this.callsitesFn.apply(undefined, arg),
    );
    if (done instanceof Promise) done.catch(() => {}); // a lost isolate shows on the next activation
  }

  dispose(): void {
    if (this.state === "live") this.state = "ended";
    try {
      this.context.release();
    } catch {
      // the isolate may already be gone
    }
    this.sandbox.release(this.slot, this);
  }

  /**
   * The isolate holds more memory outside its heaps than the limit allows, seen as this run's
   * activation ended: the run fails, and its isolate is disposed, which is what frees that memory
   * (the isolate's other runs are evicted, and replay in a new one).
   */
  private overExternalMemory({ bytes, ceiling }: ExternalVerdict): ErrorData {
    this.sandbox.lost(this.slot);
    this.state = "ended";
    const limit = this.sandbox.options.memoryLimitMb;
    const mib = (n: number) => Math.round(n / MIB);
    return {
      name: "RewindError",
      code: "MEMORY_LIMIT",
      message:
        ceiling === 0
          ? `The run held about ${mib(bytes)} MiB outside the JavaScript heap ` +
            `(WebAssembly memories), more than the sandbox's memory limit of ${limit} MiB, and was ` +
            `stopped: use smaller WebAssembly memories, or raise the limit`
          : `The run grew its memory outside the JavaScript heap (WebAssembly memories) while its ` +
            `sandbox process held about ${mib(bytes)} MiB there, more than the ${mib(ceiling)} MiB ` +
            `its runs may hold together (${limit} MiB each), and was stopped: retry it later, ` +
            `or use smaller WebAssembly memories`,
    };
  }

  /** @internal */
  markEvicted(): void {
    this.state = "evicted";
  }

  /**
   * How long script code may run now as a sync call, in ms; 0 means async (or, in sync mode, the
   * whole CPU limit). Sync slices only on an idle isolate: otherwise the sync call would wait for
   * its lock. An async call costs about ten times a sync one, and while it is in flight every
   * other run's call on the isolate goes async too.
   */
  private sliceMs(): number {
    const { cpuLimitMs, replaySliceMs, liveSliceMs } = this.sandbox.options;
    if (this.slot.busy !== 0) return 0;
    const replaying = !this.capturing;
    if (replaying && this.fastReplay) return Math.min(cpuLimitMs, replaySliceMs);
    if (!replaying && this.liveSlices) return Math.min(cpuLimitMs, liveSliceMs);
    return 0;
  }

  /** A slice that ran out is not the script's CPU limit: the caller runs it again, async. */
  private throwIfSliceRanOut(slice: number, failure: ErrorData): void {
    if (slice > 0 && slice < this.sandbox.options.cpuLimitMs && failure.code === "CPU_LIMIT")
      throw this.capturing ? new LiveSliceExceeded(slice) : new ReplaySliceExceeded(slice);
  }

  private async activate(
    fn: GuestFn,
    arg: string,
    startedAt = performance.now(),
  ): Promise<GuestCommand[]> {
    if (this.state === "evicted") {
      throw new RewindError(
        "SANDBOX_ERROR",
        "The run's sandbox was evicted: replay it from its journal",
      );
    }
    if (this.state === "ended")
      throw new RewindError("SANDBOX_ERROR", "The run's sandbox has ended");
    const timeout = this.sandbox.options.cpuLimitMs;
    const slice = this.sliceMs();
    if (slice > 0 && ++this.sliced % 128 === 0)
      await new Promise((resolve) => setImmediate(resolve)); // let the loop breathe
    let batch = "[]";
    let failure: ErrorData | undefined;
    this.sandbox.beforeActivation(this);
    if (slice > 0 || this.sandbox.options.mode === "sync") {
      // The usual live path, a hot tool call's: two sync calls and not one promise between them.
      try {
        fn.applySync(undefined, [arg], { timeout: slice > 0 ? slice : timeout });
        // collect runs no code a script can reach: no time limit needed (and it saves a timer).
        batch = this.collectFn.applySync(undefined, []);
      } catch (error) {
        failure = this.failureOf(error);
      }
    } else {
      failure = await this.guard(async () => {
        await this.slot.busyWith(() => fn.apply(undefined, [arg], { timeout }));
        const collected = this.slot.use(
          "async",
          () => this.collectFn.applySync(undefined, []),
          () => this.collectFn.apply(undefined, []),
        );
        batch = typeof collected === "string" ? collected : await collected;
      });
    }
    if (failure !== undefined) {
      this.throwIfSliceRanOut(slice, failure);
      return [{ type: "fail", error: failure }];
    }
    const external = this.sandbox.externalMemoryOver(this, startedAt);
    if (external !== undefined) return [{ type: "fail", error: this.overExternalMemory(external) }];
    try {
      return this.checkIds(
        parseCommands(
          batch,
          (p) => this.mapper.callsite(p),
          (s) => this.mapper.stack(s),
          this.sandbox.options,
        ),
      );
    } catch (error) {
      this.end();
      return [
        {
          type: "fail",
          error: {
            name: "RewindError",
            code: "SANDBOX_ERROR",
            message: `The sandbox emitted an invalid command: ${String(error)}`,
          },
        },
      ];
    }
  }

  /**
   * Calls and timers carry consecutive ids; a cancel names one already set; a success never
   * leaves a call unanswered; nothing follows the command that ended the run.
   */
  private checkIds(commands: GuestCommand[]): GuestCommand[] {
    for (const command of commands) {
      if (this.finished) throw new TypeError("a command follows the run's end");
      if (command.type === "complete" || command.type === "fail") {
        this.finished = true;
        // A failure may end a run with calls out (the runtime broke mid-delivery); a success not.
        const [out] = this.callsOut;
        if (command.type === "complete" && out !== undefined)
          throw new TypeError(`the run completed while its tool call ${out} was unanswered`);
      } else if (command.type === "call" || command.type === "timer.set") {
        // The runtime numbers calls and timers 1, 2, 3…: a gap is an id the runtime never gave.
        if (command.id !== this.lastId + 1)
          throw new TypeError(`command id ${command.id} is not the next one, ${this.lastId + 1}`);
        this.lastId = command.id;
        if (command.type === "call") this.callsOut.add(command.id);
      } else if (command.type === "timer.cancel" && command.id > this.lastId) {
        throw new TypeError(`timer.cancel names id ${command.id}, which was never set`);
      }
    }
    return commands;
  }

  /** Runs guest code; a limit hit becomes the run's failure, never the host's. */
  private async guard(body: () => Promise<void>): Promise<ErrorData | undefined> {
    try {
      await body();
      return undefined;
    } catch (error) {
      return this.failureOf(error);
    }
  }

  /** What a call into the guest that threw means for the run (and ends its sandbox). */
  private failureOf(error: unknown): ErrorData {
    const message = error instanceof Error ? error.message : String(error);
    if (this.slot.isolate.isDisposed) {
      this.sandbox.lost(this.slot);
      this.state = "ended";
      return {
        name: "RewindError",
        code: "MEMORY_LIMIT",
        message:
          `The run used more than the sandbox's memory limit of ${this.sandbox.options.memoryLimitMb} MiB ` +
          `and was stopped: keep less data in memory, or raise the limit`,
      };
    }
    const timedOut = /timed out/i.test(message);
    // Read before the context is released: what the turn had emitted names the real cause.
    const emitted = timedOut ? this.emittedThisTurn() : undefined;
    this.end();
    if (timedOut) {
      return {
        name: "RewindError",
        code: "CPU_LIMIT",
        message: cpuLimitMessage(this.sandbox.options.cpuLimitMs, emitted),
      };
    }
    if (
      /isolate|disposed|released/i.test(message) &&
      !(error instanceof Error && error.stack?.includes(SCRIPT_FILE))
    ) {
      return {
        name: "RewindError",
        code: "SANDBOX_ERROR",
        message: `The sandbox failed: ${message}`,
      };
    }
    // Script code threw out of the isolate: an error at its top level, or a promise rejection
    // nobody handled (which, as in Node, ends the program). The run fails; the host does not.
    const thrown = error instanceof Error ? error : undefined;
    const data: ErrorData = {
      name: thrown?.name ?? "Error",
      message: thrown === undefined ? `Uncaught ${String(error)}` : message,
      code: "SCRIPT_ERROR",
    };
    if (thrown?.stack !== undefined) data.stack = this.mapper.stack(thrown.stack);
    return data;
  }

  /**
   * The commands a turn stopped by the CPU limit had emitted but not yet handed over: a turn that
   * logged or armed timers by the hundred thousand spent its time on them, not in a bare loop.
   * Only on an idle isolate (a sync call would wait for another run's lock), and best effort:
   * a batch that cannot be read just leaves the cause unnamed.
   */
  private emittedThisTurn(): { outputs: number; timers: number } | undefined {
    if (this.slot.busy !== 0 || this.slot.isolate.isDisposed) return undefined;
    try {
      const batch = this.collectFn.applySync(undefined, [], { timeout: 200 });
      let outputs = 0;
      let timers = 0;
      for (const command of parseCommands(
        batch,
        (site) => site,
        (stack) => stack,
        this.sandbox.options,
      )) {
        if (command.type === "output") outputs++;
        else if (command.type === "timer.set") timers++;
      }
      return { outputs, timers };
    } catch {
      return undefined;
    }
  }

  private end(): void {
    if (this.state === "live") this.dispose();
  }
}

/** At least this many commands in the turn: they, not a bare loop, took the CPU limit. */
const MANY_COMMANDS = 1000;

function cpuLimitMessage(
  cpuLimitMs: number,
  emitted: { outputs: number; timers: number } | undefined,
): string {
  const ran = `The script ran for more than ${cpuLimitMs} ms without awaiting anything and was stopped`;
  if (
    emitted !== undefined &&
    emitted.outputs >= MANY_COMMANDS &&
    emitted.outputs >= emitted.timers
  ) {
    return (
      `${ran} after writing ${emitted.outputs} lines of output in that turn: each line is journaled, ` +
      `so log less (a summary instead of a line per item), or await between batches`
    );
  }
  if (emitted !== undefined && emitted.timers >= MANY_COMMANDS) {
    return (
      `${ran} after setting ${emitted.timers} timers in that turn: each timer is journaled, ` +
      `so set fewer (one timer for a batch of work), or await between batches`
    );
  }
  return `${ran}: look for an endless loop, or split the work across awaits`;
}

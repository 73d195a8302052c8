import { userCallsite } from "./callsite.js";
import {
  JsonParse,
  JsonStringify,
  OriginalError,
  OriginalPromise,
  OriginalRangeError,
  PromiseThen,
  promiseResolve,
} from "./intrinsics.js";
import { toWire } from "./serialize.js";

/**
 * The guest side of the wall: commands the script emits are queued here as JSON fragments until
 * the host collects them; events the host delivers settle the promises the script awaits.
 *
 * Ids are guest-local (1, 2, 3 … in emission order, deterministic); the host maps them to journal
 * seqs. Nothing here calls out: the host pulls (`collect`) after each delivery, once the isolate's
 * microtasks have run to quiescence.
 */

interface WireError {
  name: string;
  message: string;
  code?: string;
  stack?: string;
}
type GuestEvent =
  | { t: "result"; id: number; at: number; ok: true; value: unknown }
  | { t: "result"; id: number; at: number; ok: false; error: WireError }
  | { t: "fire"; id: number; at: number }
  | { t: "signal"; name: string; at: number; payload: unknown };

interface PendingCall {
  resolve(value: unknown): void;
  reject(error: unknown): void;
}
interface PendingTimer {
  fire(): void;
}

export const clock = { now: 0, start: 0 };

/**
 * The commands emitted since the last collect, as JSON text. A string, not an array: writing into
 * an array can run a setter a script put on Array.prototype, and collect must run no script code.
 */
let batch = "";
const calls = new Map<number, PendingCall>();
const timers = new Map<number, PendingTimer>();
const signalWaiters = new Map<string, ((payload: unknown) => void)[]>();
const bufferedSignals = new Map<string, unknown[]>();
let nextId = 1;
let callsInFlight = 0;
/** The completion command, serialised when main settled (inside an activation, under its limit). */
let outcome: string | null = null;
let finished = false;
/** The runtime itself failed (a script broke a built-in it relies on): end now, calls or not. */
let broken = false;
/** Callsites cost a stack capture; the host turns them off while replaying recorded batches. */
export const sites = { capture: true };

function emit(fragment: string): void {
  if (!finished) batch = batch === "" ? fragment : `${batch},${fragment}`;
}

/**
 * `line:column` of the script line emitting a command, when the host wants callsites. A callsite
 * kept to label a later command (a signal wait's timeout, an interval's next tick) is captured
 * with `userCallsite()` always: the later command may be live even if this moment is replayed.
 */
export function site(): string {
  return sites.capture ? userCallsite() : "";
}

export function callTool(name: string, args: unknown): Promise<unknown> {
  if (finished) return new OriginalPromise(() => {}); // the run is over; nothing more leaves the sandbox
  const wireArgs = toWire(args, `The arguments of tools.${name}()`);
  const id = nextId++;
  const callsite = site();
  emit(
    `{"t":"call","id":${id},"name":${JsonStringify(name)},"site":"${callsite}","args":${wireArgs}}`,
  );
  callsInFlight++;
  return new OriginalPromise((resolve, reject) => {
    calls.set(id, { resolve, reject });
  });
}

/**
 * The last instant a JavaScript Date can name (+275760-09-13T00:00:00.000Z). A timer due later
 * could not be shown (its due date is no date), nor kept by the store: the largest duration a
 * script may wait is the one that ends there (docs/timers.md).
 */
const LAST_DUE_MS = 8.64e15;

/**
 * Throws, where the script can catch it, when a wait of `delayMs` would end after LAST_DUE_MS.
 * Only waits that never worked are refused: before this check they made the run unshowable or
 * failed it at its next commit.
 */
export function checkWait(delayMs: number, what: string): void {
  if (finished || clock.now + delayMs <= LAST_DUE_MS) return;
  throw new OriginalRangeError(
    `${what} of ${delayMs} ms would end after +275760-09-13T00:00:00.000Z, the last instant a ` +
      `timer can be due: wait at most ${LAST_DUE_MS - clock.now} ms from now`,
  );
}

/** Sets a journaled timer; returns its id. `fire` runs when the host delivers `timer.fired`. */
export function setTimer(delayMs: number, fire: () => void, callsite = site()): number {
  const id = nextId++;
  if (finished) return id;
  emit(`{"t":"timer","id":${id},"due":${clock.now + delayMs},"site":"${callsite}"}`);
  timers.set(id, { fire });
  return id;
}

export function cancelTimer(id: number, callsite = site()): void {
  if (!timers.delete(id)) return; // already fired, cancelled, or never a timer: nothing to journal
  emit(`{"t":"cancel","id":${id},"site":"${callsite}"}`);
}

export function output(stream: "stdout" | "stderr", text: string): void {
  emit(`{"t":"out","stream":"${stream}","site":"${site()}","text":${JsonStringify(text)}}`);
}

/** Resolves with the next signal of that name (buffered if it arrived first), or undefined on timeout. */
export function nextSignal(name: string, timeoutMs: number | undefined): Promise<unknown> {
  const buffered = bufferedSignals.get(name);
  if (buffered !== undefined && buffered.length > 0) {
    return promiseResolve(buffered.shift());
  }
  const callsite = userCallsite();
  return new OriginalPromise((resolve) => {
    let waiters = signalWaiters.get(name);
    if (waiters === undefined) signalWaiters.set(name, (waiters = []));
    let timerId = 0;
    const waiter = (payload: unknown) => {
      if (timerId !== 0) cancelTimer(timerId, callsite);
      resolve(payload);
    };
    waiters.push(waiter);
    if (timeoutMs !== undefined) {
      checkWait(timeoutMs, "waitForSignal()'s timeout");
      timerId = setTimer(
        timeoutMs,
        () => {
          const index = waiters.indexOf(waiter);
          if (index >= 0) waiters.splice(index, 1);
          resolve(undefined);
        },
        callsite,
      );
    }
  });
}

/**
 * Called once with main's promise. The completion command is serialised as soon as main settles,
 * inside the activation and under its CPU limit (a result's toJSON or getters are script code);
 * it is emitted when no tool call is in flight.
 */
export function settleMain(promise: Promise<unknown>): void {
  void PromiseThen(
    promise,
    (value) => {
      if (outcome === null) outcome = completed(value);
    },
    (error) => {
      failRun(error);
    },
  );
}

/** An uncaught error outside main (a timer callback that throws) fails the run, as in Node. */
export function failRun(error: unknown): void {
  if (outcome === null) outcome = `{"t":"done","ok":false,"error":${errorToWire(error)}}`;
}

/**
 * Delivers one event. Never throws: an exception escaping a call into the isolate would make
 * isolated-vm report a pending rejection on whatever call comes next, maybe another run's.
 */
export function deliver(eventJson: string): void {
  try {
    deliverEvent(JsonParse(eventJson) as GuestEvent);
  } catch (error) {
    // Delivery is runtime code: it throws only when the script broke what it relies on (a
    // tampered built-in). Its bookkeeping cannot be trusted any more, so the run ends now.
    failRun(error);
    broken = true;
  }
}

function deliverEvent(event: GuestEvent): void {
  clock.now = event.at;
  switch (event.t) {
    case "result": {
      const call = calls.get(event.id);
      if (call === undefined) return;
      calls.delete(event.id);
      callsInFlight--;
      if (event.ok) call.resolve(event.value);
      else call.reject(toGuestError(event.error));
      return;
    }
    case "fire": {
      const timer = timers.get(event.id);
      if (timer === undefined) return;
      timers.delete(event.id);
      try {
        timer.fire();
      } catch (error) {
        failRun(error);
      }
      return;
    }
    case "signal": {
      const waiters = signalWaiters.get(event.name);
      const waiter = waiters?.shift();
      if (waiter !== undefined) {
        waiter(event.payload);
        return;
      }
      let buffered = bufferedSignals.get(event.name);
      if (buffered === undefined) bufferedSignals.set(event.name, (buffered = []));
      buffered.push(event.payload);
    }
  }
}

/**
 * The commands emitted since the last collect, as a JSON array. Called by the host after the
 * microtasks of a delivery have drained, which is also the only moment completion can be decided:
 * a run never ends while a tool call is in flight, because a forgotten call's continuation may
 * still make another call. Runs no code a script can reach (no prototype method, no getter), so
 * the host may call it without a time limit.
 */
export function collect(): string {
  if (!finished && outcome !== null && (callsInFlight === 0 || broken)) {
    finished = true;
    batch = batch === "" ? outcome : `${batch},${outcome}`;
  }
  const text = `[${batch}]`;
  batch = "";
  return text;
}

function completed(value: unknown): string {
  try {
    return `{"t":"done","ok":true,"value":${toWire(value, "The run's result")}}`;
  } catch (error) {
    return `{"t":"done","ok":false,"error":${errorToWire(error)}}`;
  }
}

function errorToWire(error: unknown): string {
  if (error instanceof OriginalError) {
    const code = (error as { code?: unknown }).code;
    return JsonStringify({
      name: String(error.name),
      message: String(error.message),
      stack: typeof error.stack === "string" ? error.stack : undefined,
      code: typeof code === "string" ? code : undefined,
    });
  }
  let message: string;
  try {
    message = typeof error === "string" ? error : (JsonStringify(error) ?? String(error));
  } catch {
    message = String(error);
  }
  return JsonStringify({ name: "Error", message: `Uncaught ${message}` });
}

/** A tool's error as the script sees it: an Error with the tool's name, message and code. */
function toGuestError(data: WireError): Error {
  const error = new OriginalError(data.message) as Error & { code?: string };
  error.name = data.name;
  if (data.code !== undefined) error.code = data.code;
  return error;
}

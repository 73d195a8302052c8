/**
 * A sandbox process (see SandboxProcesses): runs scripts in a sync-mode Sandbox, one request at
 * a time, for the parent that serves the runs. A script's single huge allocation can abort the
 * process it runs in (isolated-vm's memory limit is a guideline: V8 gives up on the whole
 * process); here that ends this process only, and the parent knows which run was executing.
 */
import { RewindError, toErrorData } from "@rewind/core";
import {
  SUPPORTED_EPOCHS,
  Sandbox,
  guestBundle,
  type CompiledScript,
  type ScriptInstance,
} from "@rewind/sandbox";
import type { ChildAnswer, ChildReply, ChildRequest } from "./sandbox-wire.js";

const send = process.send?.bind(process);
if (send === undefined)
  throw new Error("sandbox-child runs as a child process, started by SandboxProcesses");

let sandbox: Sandbox | undefined;
const scripts = new Map<string, CompiledScript>();
const instances = new Map<number, ScriptInstance>();
let heapAt = 0;

// One at a time, in arrival order: that is what lets the parent name the run executing.
let queue = Promise.resolve();
process.on("message", (request: ChildRequest) => {
  queue = queue.then(() => handle(request));
});
// The parent went away: nothing is left to answer, and nobody else may use these runs.
process.on("disconnect", () => process.exit(0));

async function handle(request: ChildRequest): Promise<void> {
  switch (request.op) {
    case "options":
      sandbox?.dispose();
      // This process does nothing else: its resident size tells the isolates' WebAssembly memory.
      sandbox = new Sandbox({ ...request.options, mode: "sync", guardExternalMemory: true });
      for (const epoch of SUPPORTED_EPOCHS) guestBundle(epoch); // built now, not by the first run
      return;
    case "callsites":
      instances.get(request.inst)?.captureCallsites(request.on);
      return;
    case "dispose":
      instances.get(request.inst)?.dispose();
      instances.delete(request.inst);
      return;
    default:
      reply(request.id, await answer(request));
      // While the worker commits what this activation produced: the next run's context, so a
      // run's start need not wait for one (Sandbox.prepare). Not after an instantiate, whose
      // start follows at once.
      if (request.op !== "instantiate") setImmediate(() => sandbox?.prepare());
  }
}

async function answer(request: Extract<ChildRequest, { id: number }>): Promise<ChildAnswer> {
  const instance = request.op === "instantiate" ? undefined : instances.get(request.inst);
  try {
    switch (request.op) {
      case "instantiate": {
        const { key, compiled } = request.script;
        if (compiled !== undefined) scripts.set(key, compiled);
        const script = scripts.get(key);
        if (script === undefined)
          throw new RewindError("SANDBOX_ERROR", `Script ${key} was never sent`);
        sandbox ??= new Sandbox({ mode: "sync", guardExternalMemory: true });
        instances.set(request.inst, await sandbox.instantiate(script, request.run));
        return { ok: null };
      }
      case "start":
        return { ok: await live(request.inst).start(request.input) };
      case "deliver":
        return { ok: await live(request.inst).deliver(request.event) };
    }
  } catch (error) {
    return { error: toErrorData(error, "SANDBOX_ERROR"), evicted: instance?.evicted === true };
  }
}

function live(inst: number): ScriptInstance {
  const instance = instances.get(inst);
  if (instance === undefined)
    throw new RewindError("SANDBOX_ERROR", `No instance ${inst} in this sandbox process`);
  return instance;
}

function reply(id: number, body: ChildAnswer): void {
  const message: ChildReply = { id, ...body };
  // The heap now and then: reading it takes every isolate's lock, not worth it on each call.
  const now = performance.now();
  if (now - heapAt > 250 && sandbox !== undefined) {
    heapAt = now;
    message.heap = sandbox.heapUsedBytes();
  }
  send!(message);
}

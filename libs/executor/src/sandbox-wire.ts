import type { ErrorData, GuestCommand, GuestEvent, Json } from "@rewind/core";
import type { CompiledScript, InstantiateOptions, SandboxOptions } from "@rewind/sandbox";

/**
 * What a SandboxProcesses parent sends its sandbox child. Requests that run script code (or
 * might) carry an id and get one reply each, in order: the child takes them one at a time, so the
 * oldest unanswered request is the one executing. `callsites` and `dispose` need no answer.
 */
export type ChildRequest =
  | { op: "options"; options: SandboxOptions }
  | {
      op: "instantiate";
      id: number;
      inst: number;
      /**
       * The script, the first time this child sees its key; else only the key. The key is the code
       * hash and the source map's: tenants may upload the same code with different maps, and each
       * run's callsites must come from its own namespace's copy.
       */
      script: { key: string; compiled?: CompiledScript };
      run: InstantiateOptions;
    }
  | { op: "start"; id: number; inst: number; input: Json }
  | { op: "deliver"; id: number; inst: number; event: GuestEvent }
  | { op: "callsites"; inst: number; on: boolean }
  | { op: "dispose"; inst: number };

/**
 * One answer per request. `evicted`: the instance's isolate was lost under it (another run went
 * over the memory limit in it): the run is loaded again, charged nothing. `heap`: the child's
 * isolates' heap in bytes, sent now and then.
 */
export type ChildReply = { id: number; heap?: number } & ChildAnswer;

export type ChildAnswer = { ok: GuestCommand[] | null } | { error: ErrorData; evicted?: boolean };

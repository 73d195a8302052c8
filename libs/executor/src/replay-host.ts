/**
 * The child process that runs the API's replay checks (see ReplayProcess): a ReplayPool of
 * threads, driven over IPC. A script's single huge allocation can abort the process it runs in
 * (isolated-vm's memory limit is a guideline, and V8 gives up on the whole process); here that
 * ends this process only, and the parent says so to whoever asked.
 */
import { toErrorData } from "@rewind/core";
import { ReplayPool } from "./replay-pool.js";
import type { HostRequest, HostReply } from "./replay-process.js";

const send = process.send?.bind(process);
if (send === undefined)
  throw new Error("replay-host runs as a child process, started by ReplayProcess");

let pool: ReplayPool | undefined;

process.on("message", (request: HostRequest) => {
  if (request.kind === "start") {
    pool = new ReplayPool(request.options);
    return;
  }
  void answer(request).then((reply) => send(reply));
});
// The parent went away (or closed the channel): nothing is left to answer.
process.on("disconnect", () => void pool?.close().finally(() => process.exit(0)));

async function answer(request: Exclude<HostRequest, { kind: "start" }>): Promise<HostReply> {
  try {
    const replays = pool ?? (pool = new ReplayPool());
    const ok =
      request.kind === "check"
        ? await replays.check(request.script, request.journal)
        : await replays.previewFork(
            request.script,
            request.started,
            request.parent,
            request.at,
            request.unsafeTools,
          );
    return { id: request.id, ok };
  } catch (error) {
    return { id: request.id, error: toErrorData(error, "SANDBOX_ERROR") };
  }
}

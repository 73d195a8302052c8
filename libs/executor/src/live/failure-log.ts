import { runFields } from "@rewind/telemetry";

/**
 * Logs failed activations without flooding: while the store is down every open run fails once a
 * second, so the same message is said once, then counted, and the count is told every `everyMs`.
 */
export function activationFailureLog(
  log: (line: string, fields?: object) => void,
  everyMs = 5_000,
  now: () => number = Date.now,
): (runId: string, error: unknown) => void {
  let lastMessage = "";
  let lastAt = -Infinity;
  let repeats = 0;
  const runs = new Set<string>();
  return (runId, error) => {
    const message = error instanceof Error ? error.message : String(error);
    if (message === lastMessage && now() - lastAt < everyMs) {
      repeats++;
      runs.add(runId);
      return;
    }
    if (repeats > 0)
      log(`… and ${repeats} more failed activation(s) of ${runs.size} run(s) with the same error`);
    log(`run ${runId}: activation failed, retrying: ${message}`, runFields(runId));
    lastMessage = message;
    lastAt = now();
    repeats = 0;
    runs.clear();
  };
}

/** The line a worker says when it quarantines a run: its run id, the entry's seq, its trace id. */
export function quarantineLog(
  log: (line: string, fields?: object) => void,
): (runId: string, seq: number, reason: string) => void {
  return (runId, seq, reason) =>
    log(
      `run ${runId} quarantined at seq ${seq} (${reason}): \`rewind quarantine show ${runId}\` has the report`,
      runFields(runId, seq),
    );
}

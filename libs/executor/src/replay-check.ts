import { isCommandEntry, type JournalEntry } from "@rewind/core";
import { DivergenceError, RunEngine, type DivergenceReport } from "@rewind/journal";
import type { CompiledScript, ScriptSandbox } from "@rewind/sandbox";
import { EmittedCommands, type CommandView } from "./emitted-commands.js";

/** A divergence, and the commands the script emitted from it on (whole, not labels). */
export type ReplayDivergence = DivergenceReport & { replayedCommands?: CommandView[] };

export type ReplayCheck =
  | { matches: true; entries: number }
  | { matches: false; divergence: ReplayDivergence; message: string };

/**
 * Re-executes a script against a recorded journal without calling anything: every command it
 * emits is checked against the journal. Matches when the whole journal replays (a run still in
 * progress matches as far as it went). A divergence names the first differing entry, with both
 * callsites (the replay runs again with callsites on when the fast pass skipped them). It replays
 * in the journal's epoch, or in `epoch` (a check before moving a run onto another epoch).
 */
export async function checkReplay(
  sandbox: ScriptSandbox,
  script: CompiledScript,
  journal: readonly JournalEntry[],
  epoch?: number,
): Promise<ReplayCheck> {
  const started = journal[0];
  if (started?.kind !== "run.started") throw new TypeError("a journal begins with run.started");
  const attempt = async (replayCallsites: boolean): Promise<ReplayCheck> => {
    const instance = await sandbox.instantiate(script, {
      seed: started.seed,
      startAt: started.at,
      epoch: epoch ?? started.epoch,
    });
    const emitted = new EmittedCommands(instance);
    try {
      await RunEngine.resume(emitted, journal, {
        replayCallsites,
        maxValueBytes: sandbox.options.maxValueBytes,
      });
      return { matches: true, entries: journal.length };
    } catch (error) {
      if (error instanceof DivergenceError) {
        // The script's commands are matched in order against the journal's: those before the
        // divergence matched one for one, so the next one emitted is the one that differs.
        const before = journal.filter((e) => e.seq < error.report.seq && isCommandEntry(e)).length;
        const replayedCommands = emitted.from(before);
        return {
          matches: false,
          divergence: {
            ...error.report,
            ...(replayedCommands.length > 0 ? { replayedCommands } : {}),
          },
          message: error.message,
        };
      }
      throw error;
    } finally {
      instance.dispose();
    }
  };
  const first = await attempt(false);
  if (!first.matches && first.divergence.replayed && !first.divergence.replayed.callsite)
    return attempt(true);
  return first;
}

/**
 * A check of a corrected script against a run that failed, in words a fix needs: the script
 * diverging exactly where the run failed (it now calls, waits or returns instead of throwing)
 * is what a fix looks like, and a fork reuses every entry before the failure ("fixes-failure");
 * a divergence before the failure means the fork would run live from that earlier entry
 * ("incompatible"). Undefined when the check matched or the run did not fail.
 */
export function failureVerdict(
  check: ReplayCheck,
  journal: readonly JournalEntry[],
): "fixes-failure" | "incompatible" | undefined {
  if (check.matches) return undefined;
  const failed = journal.find((entry) => entry.kind === "run.failed");
  if (failed === undefined) return undefined;
  return check.divergence.seq === failed.seq ? "fixes-failure" : "incompatible";
}

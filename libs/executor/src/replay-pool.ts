import { availableParallelism } from "node:os";
import { fileURLToPath } from "node:url";
import { Piscina } from "piscina";
import {
  RewindError,
  isErrorCode,
  type ErrorData,
  type JournalEntry,
  type RunStartedEntry,
} from "@rewind/core";
import type { CompiledScript } from "@rewind/sandbox";
import { metrics } from "@rewind/telemetry";
import type { ForkPreview } from "./fork-preview.js";
import type { ReplayCheck } from "./replay-check.js";
import type { ReplayOutcome, ReplayTask, SandboxLimits } from "./replay-worker.js";

/** Checks that re-execute scripts against journals, calling nothing (the API's replay and fork preview). */
export interface ReplayChecks {
  check(script: CompiledScript, journal: readonly JournalEntry[]): Promise<ReplayCheck>;
  previewFork(
    script: CompiledScript,
    started: RunStartedEntry,
    parent: readonly JournalEntry[],
    at?: number,
    /** The toolset's tools marked unsafeToRepeat (undefined: the toolset is not known). */
    unsafeTools?: readonly string[],
  ): Promise<ForkPreview>;
  close(): Promise<void>;
}

export interface ReplayPoolOptions {
  /** Worker threads, each with its own sandbox (default: the machine's parallelism). */
  threads?: number;
  /** Limits of the threads' sandboxes (CPU per activation, memory, value size). */
  sandbox?: SandboxLimits;
  /** A thread with nothing to do exits after this long, in ms (default 60 s). */
  idleTimeoutMs?: number;
}

/**
 * Replay checks on worker threads (piscina), so that a thousand of them use every core and never
 * hold the API's event loop: the main thread only reads journals and answers requests. Threads
 * start on first use, each with a sandbox of its own in sync mode. The threads share this
 * process, which a script's huge allocation can abort: the API runs this pool in a child process
 * of its own (ReplayProcess).
 *
 * The worker module is found next to this file: `replay-worker.js` in dist/, or, when this file
 * runs from its TypeScript source (vitest), `replay-worker.ts` loaded through a small esbuild
 * hook with the workspace's "@rewind/source" condition, so tests exercise the current sources.
 */
export class ReplayPool implements ReplayChecks {
  private readonly pool: Piscina<ReplayTask, ReplayOutcome<ReplayCheck | ForkPreview>>;
  private readonly limits: SandboxLimits;

  constructor(options: ReplayPoolOptions = {}) {
    const threads = options.threads ?? availableParallelism();
    if (!Number.isInteger(threads) || threads < 1 || threads > 256)
      throw new RewindError(
        "INVALID_INPUT",
        `A replay pool needs 1 to 256 threads, got ${threads}: leave it unset to use every core`,
      );
    this.limits = options.sandbox ?? {};
    const fromSource = import.meta.url.endsWith(".ts");
    this.pool = new Piscina({
      filename: new URL(fromSource ? "./replay-worker.ts" : "./replay-worker.js", import.meta.url)
        .href,
      minThreads: 0,
      maxThreads: threads,
      idleTimeout: options.idleTimeoutMs ?? 60_000,
      // Built: the threads inherit the process's options. From source: only what loading the
      // sources needs (a thread refuses V8 flags such as vitest's --expose-gc).
      ...(fromSource
        ? {
            execArgv: [
              "--conditions=@rewind/source",
              "--import",
              fileURLToPath(new URL("./worker-source/register.mjs", import.meta.url)),
            ],
          }
        : {}),
    });
  }

  get threads(): number {
    return this.pool.options.maxThreads;
  }

  check(script: CompiledScript, journal: readonly JournalEntry[]): Promise<ReplayCheck> {
    return this.run<ReplayCheck>({
      kind: "check",
      script: plain(script),
      // A JSON string crosses to the thread about five times cheaper than the same entries
      // cloned (measured on 201 entries): this thread serves requests, the other one parses.
      journal: JSON.stringify(journal),
      sandbox: this.limits,
    });
  }

  previewFork(
    script: CompiledScript,
    started: RunStartedEntry,
    parent: readonly JournalEntry[],
    at?: number,
    unsafeTools?: readonly string[],
  ): Promise<ForkPreview> {
    return this.run<ForkPreview>({
      kind: "preview-fork",
      script: plain(script),
      started,
      parent: JSON.stringify(parent),
      ...(at === undefined ? {} : { at }),
      ...(unsafeTools === undefined ? {} : { unsafeTools }),
      sandbox: this.limits,
    });
  }

  async close(): Promise<void> {
    await this.pool.destroy();
  }

  private run<T extends ReplayCheck | ForkPreview>(task: ReplayTask): Promise<T> {
    return measured(task.kind, async () => {
      const outcome = await this.pool.run(task);
      if ("ok" in outcome) return outcome.ok as T;
      throw errorFrom(outcome.error);
    });
  }
}

/** Times a check and counts it by outcome (rewind_replay_*), in whichever pool runs it. */
export async function measured<T extends ReplayCheck | ForkPreview>(
  kind: ReplayTask["kind"],
  check: () => Promise<T>,
): Promise<T> {
  const stop = metrics.replayCheckSeconds.startTimer({ kind });
  try {
    const outcome = await check();
    const result = "matches" in outcome ? (outcome.matches ? "match" : "divergence") : "ok";
    metrics.replayChecks.inc({ kind, outcome: result });
    return outcome;
  } catch (error) {
    metrics.replayChecks.inc({ kind, outcome: "error" });
    throw error;
  } finally {
    stop();
  }
}

/** An error that crossed a thread or process boundary as data, as the error it was. */
export function errorFrom({ code, message }: ErrorData): RewindError {
  return new RewindError(isErrorCode(code) ? code : "SANDBOX_ERROR", message);
}

/** Only the fields a check needs: a stored script may carry more (dates, a namespace). */
export function plain(script: CompiledScript): CompiledScript {
  return { hash: script.hash, entry: script.entry, code: script.code, sourceMap: script.sourceMap };
}

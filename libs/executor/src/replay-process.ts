import { fork, type ChildProcess } from "node:child_process";
import { fileURLToPath } from "node:url";
import { RewindError, type ErrorData, type JournalEntry, type RunStartedEntry } from "@rewind/core";
import type { CompiledScript } from "@rewind/sandbox";
import type { ForkPreview } from "./fork-preview.js";
import type { ReplayCheck } from "./replay-check.js";
import {
  errorFrom,
  measured,
  plain,
  type ReplayChecks,
  type ReplayPoolOptions,
} from "./replay-pool.js";

/** A check the parent asks replay-host for. */
type Question =
  | { kind: "check"; script: CompiledScript; journal: readonly JournalEntry[] }
  | {
      kind: "preview-fork";
      script: CompiledScript;
      started: RunStartedEntry;
      parent: readonly JournalEntry[];
      at?: number;
      unsafeTools?: readonly string[];
    };

/** What the parent sends replay-host: its pool's options first, then numbered questions. */
export type HostRequest =
  { kind: "start"; options: ReplayPoolOptions } | (Question & { id: number });

export type HostReply = { id: number } & ({ ok: ReplayCheck | ForkPreview } | { error: ErrorData });

interface Pending {
  resolve(value: ReplayCheck | ForkPreview): void;
  reject(error: unknown): void;
}

/**
 * Replay checks (the API's replay and fork preview) in a child process of their own, running a
 * ReplayPool of threads. Scripts are untrusted: one huge allocation can abort the process that
 * runs it, whatever the sandbox's memory limit. Here that ends the child, never the API; the
 * checks it had in flight fail with a message that says so, and the next check starts a new one.
 */
export class ReplayProcess implements ReplayChecks {
  private child: ChildProcess | undefined;
  private readonly pending = new Map<number, Pending>();
  private nextId = 1;
  private closed = false;

  constructor(private readonly options: ReplayPoolOptions = {}) {}

  check(script: CompiledScript, journal: readonly JournalEntry[]): Promise<ReplayCheck> {
    return this.ask({ kind: "check", script: plain(script), journal }) as Promise<ReplayCheck>;
  }

  previewFork(
    script: CompiledScript,
    started: RunStartedEntry,
    parent: readonly JournalEntry[],
    at?: number,
    unsafeTools?: readonly string[],
  ): Promise<ForkPreview> {
    return this.ask({
      kind: "preview-fork",
      script: plain(script),
      started,
      parent,
      ...(at === undefined ? {} : { at }),
      ...(unsafeTools === undefined ? {} : { unsafeTools }),
    }) as Promise<ForkPreview>;
  }

  async close(): Promise<void> {
    this.closed = true;
    const child = this.child;
    this.child = undefined;
    if (child === undefined || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
    child.disconnect(); // it closes its pool and exits
    const timer = setTimeout(() => child.kill("SIGKILL"), 5_000);
    await exited;
    clearTimeout(timer);
  }

  private async ask(request: Question): Promise<ReplayCheck | ForkPreview> {
    if (this.closed)
      throw new RewindError("UNAVAILABLE", "The replay checks are closed: the server is stopping");
    const id = this.nextId++;
    return measured(
      request.kind,
      () =>
        new Promise<ReplayCheck | ForkPreview>((resolve, reject) => {
          this.pending.set(id, { resolve, reject });
          this.host().send({ ...request, id } satisfies HostRequest);
        }),
    );
  }

  /** The child, started on first use and again after one ended. */
  private host(): ChildProcess {
    if (this.child !== undefined) return this.child;
    const fromSource = import.meta.url.endsWith(".ts");
    const child = fork(
      fileURLToPath(new URL(fromSource ? "./replay-host.ts" : "./replay-host.js", import.meta.url)),
      [],
      {
        serialization: "advanced", // structured clone: journals cross without a JSON round
        stdio: ["ignore", "inherit", "inherit", "ipc"],
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
    child.on("message", (reply: HostReply) => this.settle(reply));
    child.on("exit", (code, signal) => this.lost(child, code, signal));
    child.on("error", () => {}); // a failed send shows as the exit that follows
    child.send({ kind: "start", options: this.options } satisfies HostRequest);
    this.child = child;
    return child;
  }

  private settle(reply: HostReply): void {
    const waiting = this.pending.get(reply.id);
    if (waiting === undefined) return;
    this.pending.delete(reply.id);
    if ("ok" in reply) waiting.resolve(reply.ok);
    else waiting.reject(errorFrom(reply.error));
  }

  /** The child ended: what it had in flight fails, saying why; the next check starts another. */
  private lost(child: ChildProcess, code: number | null, signal: NodeJS.Signals | null): void {
    if (this.child === child) this.child = undefined;
    const how = signal !== null ? `was killed (${signal})` : `exited with code ${code}`;
    const error = this.closed
      ? new RewindError(
          "UNAVAILABLE",
          "The replay checks were closed while this one ran: the server is stopping",
        )
      : new RewindError(
          "SANDBOX_ERROR",
          `The process re-executing the script ${how} before it answered: the script most likely ` +
            `went over the sandbox's memory limit in one allocation (V8 then gives up on the whole ` +
            `process). Nothing was recorded and the server goes on; look at what the script ` +
            `allocates, then check again`,
        );
    for (const waiting of this.pending.values()) waiting.reject(error);
    this.pending.clear();
  }
}

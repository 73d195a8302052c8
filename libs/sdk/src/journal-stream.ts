import type { JournalEntry, RunStatus } from "@rewind/core";

export interface FollowOptions {
  /** Only entries after this seq (default 0: the whole journal). */
  after?: number;
  /** Called whenever the run's status changes (`waiting`: on a timer, a signal or a tool). */
  onStatus?: (status: RunStatus) => void;
  /** Stops following (the iterator then ends). */
  signal?: AbortSignal;
  /** How many times in a row a broken stream is opened again (default 5). */
  retries?: number;
}

/** One Server-Sent Event: its `event` name (default "message"), `id` and `data`. */
interface ServerEvent {
  event: string;
  id?: string;
  data: string;
}

/**
 * Follows a run's journal over `GET /v1/runs/:id/journal` with `Accept: text/event-stream`:
 * yields each entry once, in seq order, as it commits, and returns when the run has ended. A
 * broken connection is opened again with `Last-Event-ID` (the last seq yielded), so nothing is
 * missed and nothing repeated.
 */
export async function* followJournal(
  open: (headers: Record<string, string>, signal: AbortSignal | undefined) => Promise<Response>,
  options: FollowOptions,
): AsyncGenerator<JournalEntry, RunStatus | undefined> {
  let after = options.after ?? 0;
  let failures = 0;
  for (;;) {
    if (options.signal?.aborted) return undefined;
    const headers: Record<string, string> = { accept: "text/event-stream" };
    if (after > 0) headers["last-event-id"] = String(after);
    let response: Response;
    try {
      response = await open(headers, options.signal);
    } catch (error) {
      if (refused(error) || options.signal?.aborted || ++failures > (options.retries ?? 5))
        throw error;
      await pause(Math.min(2_000, 100 * 2 ** failures));
      continue;
    }
    try {
      for await (const event of serverEvents(response)) {
        failures = 0;
        switch (event.event) {
          case "message": {
            const entry = JSON.parse(event.data) as JournalEntry;
            if (entry.seq <= after) break; // never twice, whatever the server sends
            after = entry.seq;
            yield entry;
            break;
          }
          case "status":
            options.onStatus?.((JSON.parse(event.data) as { status: RunStatus }).status);
            break;
          case "end":
            return (JSON.parse(event.data) as { status: RunStatus }).status;
          case "error":
            throw new Error((JSON.parse(event.data) as { message: string }).message);
          default:
            break; // an event this client does not know yet
        }
      }
    } catch (error) {
      if (options.signal?.aborted) return undefined;
      if (++failures > (options.retries ?? 5)) throw error;
      await pause(Math.min(2_000, 100 * 2 ** failures));
    }
    // The stream ended without `end` (a proxy, an API restarting): open it again from `after`.
  }
}

/** Parses a text/event-stream body into events (the WHATWG format: fields, blank-line separated). */
async function* serverEvents(response: Response): AsyncGenerator<ServerEvent> {
  if (response.body === null) return;
  const decoder = new TextDecoder();
  let buffer = "";
  let event: ServerEvent = { event: "message", data: "" };
  let hasData = false;
  for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
    buffer += decoder.decode(chunk, { stream: true });
    let newline: number;
    while ((newline = buffer.search(/\r\n|\r|\n/)) >= 0) {
      const line = buffer.slice(0, newline);
      buffer = buffer.slice(newline + (buffer.startsWith("\r\n", newline) ? 2 : 1));
      if (line === "") {
        if (hasData) yield event;
        event = { event: "message", data: "" };
        hasData = false;
        continue;
      }
      if (line.startsWith(":")) continue; // a comment: the server keeping the line alive
      const colon = line.indexOf(":");
      const field = colon < 0 ? line : line.slice(0, colon);
      const value = colon < 0 ? "" : line.slice(colon + 1).replace(/^ /, "");
      if (field === "data") {
        event.data = hasData ? `${event.data}\n${value}` : value;
        hasData = true;
      } else if (field === "event") event.event = value;
      else if (field === "id") event.id = value;
    }
  }
}

/** An answer of the API that asking again will not change (no such run, a bad token). */
function refused(error: unknown): boolean {
  const status = (error as { status?: unknown }).status;
  return typeof status === "number" && status >= 400 && status < 500;
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

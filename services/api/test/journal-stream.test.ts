/**
 * The journal as Server-Sent Events (issue 18): entries stream as they commit, woken by change
 * notices (the backstop poll is 30 s here, so a stream that waited for it would time out),
 * resumable with Last-Event-ID with no gap and no duplicate, and ending when the run ends. Over a
 * real socket, through the SDK's `runs.follow` and raw fetch.
 */
import type { AddressInfo } from "node:net";
import type { JournalEntry } from "@rewind/core";
import { Rewind, type RunStatus } from "@rewind/sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LocalRunChanges, createApi } from "../src/index.js";
import { appendAsExecutor, completeRun, openHarness, startRun, type Harness } from "./harness.js";

let h: Harness;
const changes = new LocalRunChanges();
let app: ReturnType<typeof createApi>;
let url = "";
let token = "";

beforeAll(async () => {
  h = await openHarness();
  app = createApi({
    store: h.store,
    doorbell: { ring() {} },
    version: "t",
    changes,
    pollMs: 30_000,
  });
  await app.listen({ port: 0, host: "127.0.0.1" });
  url = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
  token = h.auth.authorization.replace("Bearer ", "");
});
afterAll(async () => {
  await app.close();
  await h.close();
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Commits one output entry as the executor would, then announces it. */
async function output(runId: string, text: string, status: RunStatus = "running") {
  await appendAsExecutor(
    h.store,
    runId,
    (seq) => [{ seq, kind: "output", at: 1_000, callsite: "hello.ts:1:1", stream: "stdout", text }],
    status,
  );
  changes.notify(runId);
}

async function finish(runId: string) {
  await completeRun(h.store, runId);
  changes.notify(runId);
}

/** A raw stream's events, as { event, id, data } in order, until the server ends it. */
async function rawEvents(runId: string, headers: Record<string, string> = {}, query = "") {
  const response = await fetch(`${url}/v1/runs/${runId}/journal${query}`, {
    headers: { ...h.auth, accept: "text/event-stream", ...headers },
  });
  expect(response.status).toBe(200);
  expect(response.headers.get("content-type")).toMatch(/^text\/event-stream/);
  return (await response.text())
    .split("\n\n")
    .filter((block) => block !== "" && !block.startsWith(":"))
    .map((block) => {
      const fields = Object.fromEntries(
        block
          .split("\n")
          .map((line) => [line.slice(0, line.indexOf(":")), line.slice(line.indexOf(":") + 2)]),
      );
      return { event: fields.event ?? "message", id: fields.id, data: JSON.parse(fields.data!) };
    });
}

describe("GET /v1/runs/:id/journal as text/event-stream", () => {
  it("streams each commit as it happens, says the status, and ends when the run ends", async () => {
    const id = await startRun(h);
    const client = new Rewind({ url, token });
    const statuses: RunStatus[] = [];
    const seen: { entry: JournalEntry; at: number }[] = [];
    const following = (async () => {
      for await (const entry of client.runs.follow(id, {
        onStatus: (s: RunStatus) => statuses.push(s),
      }))
        seen.push({ entry, at: performance.now() });
    })();
    // The stream is open once it has sent what is there (on a loaded machine, not within 300 ms).
    const opened = Date.now();
    while (seen.length === 0 && Date.now() - opened < 20_000) await sleep(10);
    await sleep(100); // and nothing more comes of its own
    expect(seen.map((s) => s.entry.kind)).toEqual(["run.started"]);
    const lags: number[] = [];
    for (const text of ["one\n", "two\n", "three\n"]) {
      const before = seen.length;
      await output(id, text, text === "two\n" ? "waiting" : "running");
      const committed = performance.now();
      while (seen.length === before) await sleep(2);
      lags.push(seen.at(-1)!.at - committed);
    }
    await finish(id);
    await following; // ends by itself: the run has ended
    const seqs = seen.map((s) => s.entry.seq);
    expect(seqs).toEqual([1, 2, 3, 4, 5, 6]); // no gap, no duplicate
    expect(seen.at(-1)!.entry.kind).toBe("run.completed");
    expect(statuses).toEqual(["queued", "running", "waiting", "running", "completed"]);
    // A notice, not the 30 s backstop poll, sent each one on.
    expect(
      Math.max(...lags),
      `commit → client: ${lags.map(Math.round).join(", ")} ms`,
    ).toBeLessThan(1_000);
  });

  it("resumes after Last-Event-ID (or `after`) with the entries after it, then ends", async () => {
    const id = await startRun(h);
    await output(id, "a\n");
    await output(id, "b\n");
    await finish(id);
    const resumed = await rawEvents(id, { "last-event-id": "2" });
    expect(resumed.filter((e) => e.event === "message").map((e) => e.id)).toEqual(["3", "4", "5"]);
    expect(resumed.filter((e) => e.event === "message").map((e) => e.data.seq)).toEqual([3, 4, 5]);
    expect(resumed.at(-1)).toEqual({ event: "end", id: undefined, data: { status: "completed" } });
    // Last-Event-ID wins over `after`: a reconnecting EventSource repeats the URL it first used.
    const both = await rawEvents(id, { "last-event-id": "4" }, "?after=1");
    expect(both.filter((e) => e.event === "message").map((e) => e.id)).toEqual(["5"]);
    const after = await rawEvents(id, {}, "?after=3");
    expect(after.filter((e) => e.event === "message").map((e) => e.id)).toEqual(["4", "5"]);
  });

  it("the SDK reconnects a broken stream from the last seq it yielded: no gap, no duplicate", async () => {
    const id = await startRun(h);
    await output(id, "a\n");
    await output(id, "b\n");
    let opened = 0;
    const lastIds: (string | null)[] = [];
    // The first connection breaks right after the event with id 2, as a proxy might cut it.
    const cutting: typeof fetch = async (input, init) => {
      opened++;
      lastIds.push(new Headers(init?.headers).get("last-event-id"));
      const response = await fetch(input, init);
      if (opened > 1 || response.body === null) return response;
      const reader = response.body.getReader();
      const decoder = new TextDecoder();
      let text = "";
      const body = new ReadableStream<Uint8Array>({
        async pull(controller) {
          const cut = text.indexOf("\n\n", text.indexOf("id: 2\n"));
          if (text.includes("id: 2\n") && cut >= 0) {
            controller.enqueue(new TextEncoder().encode(text.slice(0, cut + 2)));
            controller.close();
            await reader.cancel();
            return;
          }
          const { value, done } = await reader.read();
          if (done) return controller.close();
          text += decoder.decode(value, { stream: true });
        },
      });
      return new Response(body, { status: response.status, headers: response.headers });
    };
    const client = new Rewind({ url, token, fetch: cutting });
    const seqs: number[] = [];
    const following = (async () => {
      for await (const entry of client.runs.follow(id)) seqs.push(entry.seq);
    })();
    while (seqs.length < 3) await sleep(10);
    await finish(id);
    await following;
    expect(seqs).toEqual([1, 2, 3, 4, 5]);
    expect(lastIds).toEqual([null, "2"]);
  });

  it("answers a run it cannot find with the API's 404 error, not a stream", async () => {
    const response = await fetch(`${url}/v1/runs/run_nope/journal`, {
      headers: { ...h.auth, accept: "text/event-stream" },
    });
    expect(response.status).toBe(404);
    expect(((await response.json()) as { error: { code: string } }).error.code).toBe("NOT_FOUND");
    const client = new Rewind({ url, token });
    await expect(client.runs.follow("run_nope").next()).rejects.toMatchObject({ status: 404 });
  });
});

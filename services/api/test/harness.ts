/**
 * A real store (PGlite in a temp folder, or a Postgres database of its own) behind the API, a
 * doorbell that records its rings, and helpers that play the executor's part.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import type { JournalEntry } from "@rewind/core";
import { openStore, type RunRoute, type RunStatus, type Store } from "@rewind/store";
import { createTestDatabase } from "@rewind/store/testing";
import { createApi, type ApiOptions } from "../src/index.js";
import { responseContract } from "./response-contract.js";

export const SCRIPT = {
  entry: "hello.ts",
  code: "var main = async (input) => `hello ${input.name}`; __rewind_register(main);",
  sourceMap: '{"version":3,"sources":["hello.ts"],"mappings":""}',
};

export interface Harness {
  store: Store;
  app: ReturnType<typeof createApi>;
  /** Authorization headers for namespace "acme" and for namespace "other". */
  auth: { authorization: string };
  otherAuth: { authorization: string };
  rings: string[];
  /** The same rings with their routing: epoch, and the worker holding the run hot. */
  routes: RunRoute[];
  close(): Promise<void>;
}

export async function openHarness(
  options: { postgres?: boolean } & Partial<ApiOptions> = {},
): Promise<Harness> {
  let store: Store;
  let cleanup: () => Promise<void>;
  if (options.postgres) {
    const db = await createTestDatabase("rewind_api");
    const dir = mkdtempSync(path.join(tmpdir(), "rewind-api-"));
    store = await openStore({ databaseUrl: db.url, migrate: true, dataDir: dir });
    cleanup = async () => {
      await db.drop();
      rmSync(dir, { recursive: true, force: true });
    };
  } else {
    const dir = mkdtempSync(path.join(tmpdir(), "rewind-api-"));
    store = await openStore({ dataDir: dir, migrate: true });
    cleanup = async () => rmSync(dir, { recursive: true, force: true });
  }
  const token = await store.createToken("acme", "test");
  const otherToken = await store.createToken("other", "test");
  const rings: string[] = [];
  const routes: RunRoute[] = [];
  const app = createApi({
    store,
    doorbell: {
      ring: (route) => {
        rings.push(route.runId);
        routes.push(route);
      },
    },
    version: "0.0.0-test",
    pollMs: 50,
    ...options,
  });
  await app.ready();
  checkResponses(app);
  return {
    store,
    app,
    auth: { authorization: `Bearer ${token}` },
    otherAuth: { authorization: `Bearer ${otherToken}` },
    rings,
    routes,
    async close() {
      await app.close();
      await store.close();
      await cleanup();
    },
  };
}

/** Starts a run through the API and returns its id. */
export async function startRun(h: Harness, body: Record<string, unknown> = {}): Promise<string> {
  const response = await h.app.inject({
    method: "POST",
    url: "/v1/runs",
    headers: h.auth,
    payload: { script: SCRIPT, input: { name: "Ada" }, ...body },
  });
  if (response.statusCode !== 201) throw new Error(`start failed: ${response.body}`);
  return response.json().id;
}

/** Plays the executor: takes the run's lease and commits entries after its journal's end. */
export async function appendAsExecutor(
  store: Store,
  runId: string,
  make: (nextSeq: number) => JournalEntry[],
  status: RunStatus,
): Promise<void> {
  const lease = await store.acquireLease(runId, "test-worker", 30_000);
  if (lease === undefined) throw new Error(`no lease on ${runId}`);
  const outcome = await store.commit([
    { lease, afterSeq: lease.lastSeq, entries: make(lease.lastSeq + 1), status },
  ]);
  if (outcome[0] !== "ok") throw new Error(`commit refused: ${outcome[0]}`);
  await store.releaseLease(lease);
}

export function completeRun(store: Store, runId: string, result: unknown = "hello Ada") {
  return appendAsExecutor(
    store,
    runId,
    (seq) => [
      { seq, kind: "output", at: 2_000, callsite: "hello.ts:1:1", stream: "stdout", text: "hi\n" },
      { seq: seq + 1, kind: "run.completed", at: 2_000, result: result as never },
    ],
    "completed",
  );
}

/** Asserts the shape every error shares and returns it. */
export function errorOf(response: { statusCode: number; json(): any }) {
  const body = response.json();
  if (typeof body?.error?.code !== "string" || typeof body.error.message !== "string") {
    throw new Error(`not an error body: ${JSON.stringify(body)}`);
  }
  return body.error as { code: string; message: string; field?: string };
}

/**
 * Makes every `app.inject` of a test check its response against /v1/openapi.json: an answer the
 * document does not describe throws in the test that received it.
 */
function checkResponses(app: ReturnType<typeof createApi>): void {
  const inject = app.inject.bind(app);
  let contract: ReturnType<typeof responseContract> | undefined;
  const checked = async (options: InjectOptions) => {
    contract ??= responseContract(JSON.parse((await inject({ url: "/v1/openapi.json" })).body));
    const response = await inject(options);
    const type = response.headers["content-type"];
    contract.check(
      options.method ?? "GET",
      options.url ?? "/",
      response.statusCode,
      typeof type === "string" ? type : "",
      response.body,
    );
    return response;
  };
  app.inject = checked as unknown as typeof app.inject;
}

type InjectOptions = { method?: string; url?: string } & Record<string, unknown>;

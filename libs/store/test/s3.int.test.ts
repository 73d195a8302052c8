import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import type { RunStartedEntry } from "@rewind/core";
import { S3BlobStore, SqlStore, migrate, openSqlClient, openStore } from "../src/index.js";
import { conformance } from "./conformance.js";
import { S3RVER_CREDENTIALS, startS3Server, type TestS3Server } from "./s3-server.js";

conformance("PGlite + S3 blobs", {
  async open() {
    const s3 = await startS3Server();
    const dir = mkdtempSync(path.join(tmpdir(), "rewind-pglite-s3-"));
    const sql = await openSqlClient({ dataDir: dir });
    await migrate(sql);
    const prefix = "conformance/blobs";
    const blobs = new S3BlobStore({ client: s3.client, bucket: s3.bucket, prefix });
    const store = new SqlStore(sql, blobs);
    return {
      store,
      sql,
      blobs,
      countBlobs: () => s3.countObjects(`${prefix}/`),
      async close() {
        try {
          await store.close();
        } finally {
          await s3.close();
          rmSync(dir, { recursive: true, force: true });
        }
      },
    };
  },
});

describe("openStore with REWIND_BLOB_URL=s3://…", () => {
  let s3: TestS3Server;
  let dir: string;

  beforeAll(async () => {
    s3 = await startS3Server();
    dir = mkdtempSync(path.join(tmpdir(), "rewind-open-s3-"));
  });
  afterAll(async () => {
    vi.unstubAllEnvs();
    await s3?.close();
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  });

  it("keeps values over 64 KiB in the bucket, under the prefix", async () => {
    vi.stubEnv("REWIND_S3_ENDPOINT", s3.endpoint);
    vi.stubEnv("AWS_ACCESS_KEY_ID", S3RVER_CREDENTIALS.accessKeyId);
    vi.stubEnv("AWS_SECRET_ACCESS_KEY", S3RVER_CREDENTIALS.secretAccessKey);
    const store = await openStore({
      dataDir: dir,
      migrate: true,
      blobUrl: `s3://${s3.bucket}/prod/blobs`,
    });
    try {
      await store.putScript("default", {
        hash: "sha256:script",
        entry: "s.ts",
        code: "x",
        sourceMap: "{}",
      });
      const started: RunStartedEntry = {
        seq: 1,
        kind: "run.started",
        at: 1_000,
        runId: "run_open_store_s3",
        scriptHash: "sha256:script",
        input: { text: "x".repeat(100 * 1024) },
        seed: "ab".repeat(32),
        epoch: 1,
        toolset: "shop",
        namespace: "default",
      };
      await store.createRun({ started, ttlMs: 60_000 });
      expect(await s3.countObjects("prod/blobs/")).toBe(1);
      expect((await store.readJournal(started.runId))[0]).toEqual(started);
    } finally {
      await store.close();
    }
  });

  it("refuses a malformed S3 URL before opening the database", async () => {
    const fresh = path.join(dir, "never-opened");
    await expect(
      openStore({ dataDir: fresh, migrate: true, blobUrl: "s3://x" }),
    ).rejects.toMatchObject({
      code: "INVALID_INPUT",
      message: expect.stringContaining("expected s3://bucket/prefix"),
    });
    expect(existsSync(fresh)).toBe(false);
  });
});

import { createHash } from "node:crypto";
import path from "node:path";
import { GetObjectCommand } from "@aws-sdk/client-s3";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { RewindError } from "@rewind/core";
import { FolderBlobStore, S3BlobStore, blobStoreFromUrl, parseBlobUrl } from "../src/index.js";
import { S3RVER_CREDENTIALS, startS3Server, type TestS3Server } from "./s3-server.js";

const keyOf = (data: string) => createHash("sha256").update(data).digest("hex");

describe("S3BlobStore against s3rver", () => {
  let s3: TestS3Server;
  let blobs: S3BlobStore;

  beforeAll(async () => {
    s3 = await startS3Server();
    blobs = new S3BlobStore({ client: s3.client, bucket: s3.bucket, prefix: "/unit/blobs/" });
  });
  afterAll(async () => s3?.close());

  it("round-trips a 200 KiB value at <prefix>/<first two hex>/<key>", async () => {
    const data = JSON.stringify({ text: "é".repeat(100 * 1024) }); // multi-byte: 200 KiB of UTF-8
    expect(Buffer.byteLength(data)).toBeGreaterThan(200 * 1024);
    const key = keyOf(data);
    await blobs.put(key, data);
    expect(await blobs.get(key)).toBe(data);
    const raw = await s3.client.send(
      new GetObjectCommand({ Bucket: s3.bucket, Key: `unit/blobs/${key.slice(0, 2)}/${key}` }),
    );
    expect(await raw.Body!.transformToString()).toBe(data);
  });

  it("stores an identical value once: a second put of the same key is harmless", async () => {
    const data = JSON.stringify({ again: "z".repeat(70 * 1024) });
    const key = keyOf(data);
    await blobs.put(key, data);
    await blobs.put(key, data);
    expect(await blobs.get(key)).toBe(data);
    expect(await s3.countObjects(`unit/blobs/${key.slice(0, 2)}/${key}`)).toBe(1);
  });

  it("deletes a blob, and deleting a missing one succeeds", async () => {
    const data = JSON.stringify({ doomed: true });
    const key = keyOf(data);
    await blobs.put(key, data);
    await blobs.delete(key);
    expect(await s3.countObjects(`unit/blobs/${key.slice(0, 2)}/${key}`)).toBe(0);
    await expect(blobs.delete(key)).resolves.toBeUndefined();
  });

  it("says which blob is missing, and where it was looked for", async () => {
    const key = keyOf("never stored");
    const error = await blobs.get(key).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RewindError);
    expect(error).toMatchObject({ code: "NOT_FOUND" });
    expect((error as Error).message).toContain(key);
    expect((error as Error).message).toContain(
      `s3://${s3.bucket}/unit/blobs/${key.slice(0, 2)}/${key}`,
    );
  });

  it("says to create the bucket when it does not exist", async () => {
    const nowhere = new S3BlobStore({ client: s3.client, bucket: "rewind-no-such-bucket" });
    await expect(nowhere.put(keyOf("x"), "x")).rejects.toMatchObject({
      code: "UNAVAILABLE",
      message: expect.stringMatching(/bucket rewind-no-such-bucket .* does not exist: create it/),
    });
  });

  it("keeps keys at the bucket's root without a prefix, and refuses anything not a blob key", async () => {
    const rootless = new S3BlobStore({ client: s3.client, bucket: s3.bucket });
    const data = JSON.stringify({ at: "root" });
    const key = keyOf(data);
    await rootless.put(key, data);
    expect(await s3.countObjects(`${key.slice(0, 2)}/${key}`)).toBe(1);
    expect(String(rootless)).toBe(`s3://${s3.bucket}/`);
    await expect(rootless.put("../escape", "x")).rejects.toThrow(/not a blob key/);
  });

  describe("blobStoreFromUrl with the environment's endpoint and credentials", () => {
    afterEach(() => vi.unstubAllEnvs());

    it("reaches the server named by REWIND_S3_ENDPOINT with the AWS_* credentials", async () => {
      vi.stubEnv("REWIND_S3_ENDPOINT", s3.endpoint);
      vi.stubEnv("AWS_ENDPOINT_URL_S3", "http://127.0.0.1:1"); // REWIND_S3_ENDPOINT wins
      vi.stubEnv("AWS_REGION", "");
      vi.stubEnv("AWS_ACCESS_KEY_ID", S3RVER_CREDENTIALS.accessKeyId);
      vi.stubEnv("AWS_SECRET_ACCESS_KEY", S3RVER_CREDENTIALS.secretAccessKey);
      const store = blobStoreFromUrl(`s3://${s3.bucket}/from-env/`, "/unused");
      expect(store).toBeInstanceOf(S3BlobStore);
      expect((store as S3BlobStore).toString()).toBe(`s3://${s3.bucket}/from-env`);
      const data = JSON.stringify({ via: "env" });
      const key = keyOf(data);
      await store.put(key, data);
      expect(await store.get(key)).toBe(data);
      expect(await s3.countObjects(`from-env/${key.slice(0, 2)}/${key}`)).toBe(1);
    });

    it("falls back to AWS_ENDPOINT_URL_S3", async () => {
      vi.stubEnv("REWIND_S3_ENDPOINT", "");
      vi.stubEnv("AWS_ENDPOINT_URL_S3", s3.endpoint);
      vi.stubEnv("AWS_ACCESS_KEY_ID", S3RVER_CREDENTIALS.accessKeyId);
      vi.stubEnv("AWS_SECRET_ACCESS_KEY", S3RVER_CREDENTIALS.secretAccessKey);
      const store = blobStoreFromUrl(`s3://${s3.bucket}/fallback`, "/unused");
      const data = JSON.stringify({ via: "AWS_ENDPOINT_URL_S3" });
      await store.put(keyOf(data), data);
      expect(await store.get(keyOf(data))).toBe(data);
    });
  });
});

describe("REWIND_BLOB_URL", () => {
  it("is a folder when unset or empty, a plain path, or a file:// URL", () => {
    expect(parseBlobUrl(undefined, "/data/.rewind")).toEqual({
      kind: "folder",
      path: path.resolve("/data/.rewind/blobs"),
    });
    expect(parseBlobUrl("  ", "/data/.rewind")).toEqual({
      kind: "folder",
      path: path.resolve("/data/.rewind/blobs"),
    });
    expect(parseBlobUrl("/var/lib/rewind/blobs", "/unused")).toEqual({
      kind: "folder",
      path: "/var/lib/rewind/blobs",
    });
    expect(parseBlobUrl("relative/blobs", "/unused")).toEqual({
      kind: "folder",
      path: path.resolve("relative/blobs"),
    });
    expect(parseBlobUrl("file:///var/lib/rewind%20blobs", "/unused")).toEqual({
      kind: "folder",
      path: "/var/lib/rewind blobs",
    });
    expect(blobStoreFromUrl(undefined, "/data/.rewind")).toBeInstanceOf(FolderBlobStore);
  });

  it("is a bucket and a prefix for s3://", () => {
    expect(parseBlobUrl("s3://my-bucket.prod/rewind/blobs/", "/unused")).toEqual({
      kind: "s3",
      bucket: "my-bucket.prod",
      prefix: "rewind/blobs",
    });
    expect(parseBlobUrl("S3://abc", "/unused")).toEqual({ kind: "s3", bucket: "abc", prefix: "" });
    expect(parseBlobUrl("s3://abc/", "/unused")).toEqual({ kind: "s3", bucket: "abc", prefix: "" });
    expect(parseBlobUrl("s3://abc/a%20b", "/unused")).toMatchObject({ prefix: "a b" });
  });

  it.each([
    "s3://",
    "s3:///prefix",
    "s3:bucket/prefix",
    "s3://ab/too-short",
    `s3://${"b".repeat(64)}/too-long`,
    "s3://Upper_Case/prefix",
    "s3://-dash-first/prefix",
    "s3://two..dots/prefix",
    "s3://user:secret@bucket/prefix",
    "s3://bucket:9000/prefix",
    "s3://bucket/prefix?endpoint=http://127.0.0.1:9000",
    "s3://bucket/bad%zzescape",
  ])("refuses the malformed S3 URL %s, saying the expected form", (url) => {
    let error: unknown;
    try {
      blobStoreFromUrl(url, "/unused");
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(RewindError);
    expect(error).toMatchObject({ code: "INVALID_INPUT" });
    expect((error as Error).message).toContain("s3://bucket/prefix");
  });

  it("refuses schemes it does not store blobs in, rather than making a folder named gs:", () => {
    expect(() => parseBlobUrl("gs://bucket/prefix", "/unused")).toThrow(
      expect.objectContaining({ code: "INVALID_INPUT", message: expect.stringMatching(/gs:/) }),
    );
    expect(() => parseBlobUrl("file://remote-host/blobs", "/unused")).toThrow(
      expect.objectContaining({ code: "INVALID_INPUT" }),
    );
  });
});

/**
 * A real S3-protocol server (s3rver) on loopback for the S3 tests: a random free port, a temporary
 * folder, one bucket of its own. `close()` stops it and removes the folder.
 */
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { CreateBucketCommand, ListObjectsV2Command, S3Client } from "@aws-sdk/client-s3";
import S3rver from "s3rver";

// The SDK warns once a process that Node 20 support ends in 2027: true, and noise in test output.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= "true";

/** s3rver's built-in account. */
export const S3RVER_CREDENTIALS = { accessKeyId: "S3RVER", secretAccessKey: "S3RVER" };

export interface TestS3Server {
  endpoint: string;
  bucket: string;
  /** A client for this server; `close()` destroys it. */
  client: S3Client;
  /** How many objects the bucket holds under `prefix`. */
  countObjects(prefix: string): Promise<number>;
  close(): Promise<void>;
}

export async function startS3Server(): Promise<TestS3Server> {
  const directory = mkdtempSync(path.join(tmpdir(), "rewind-s3rver-"));
  const server = new S3rver({ address: "127.0.0.1", port: 0, silent: true, directory });
  let client: S3Client | undefined;
  try {
    const { port } = await server.run();
    const endpoint = `http://127.0.0.1:${port}`;
    const bucket = `rewind-test-${randomBytes(6).toString("hex")}`;
    client = new S3Client({
      endpoint,
      region: "us-east-1",
      forcePathStyle: true,
      credentials: S3RVER_CREDENTIALS,
    });
    await client.send(new CreateBucketCommand({ Bucket: bucket }));
    const owned = client;
    return {
      endpoint,
      bucket,
      client: owned,
      async countObjects(prefix) {
        let count = 0;
        let token: string | undefined;
        do {
          const page = await owned.send(
            new ListObjectsV2Command({ Bucket: bucket, Prefix: prefix, ContinuationToken: token }),
          );
          count += page.KeyCount ?? 0;
          token = page.IsTruncated ? page.NextContinuationToken : undefined;
        } while (token !== undefined);
        return count;
      },
      async close() {
        owned.destroy();
        try {
          await server.close();
        } finally {
          rmSync(directory, { recursive: true, force: true });
        }
      },
    };
  } catch (error) {
    client?.destroy();
    await server.close().catch(() => undefined);
    rmSync(directory, { recursive: true, force: true });
    throw error;
  }
}

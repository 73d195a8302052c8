import type { S3Client, S3ClientConfig } from "@aws-sdk/client-s3";
import { RewindError } from "@rewind/core";
import type { BlobStore } from "./blobs.js";

type Sdk = typeof import("@aws-sdk/client-s3");
let sdk: Promise<Sdk> | undefined;
/** The SDK adds about 140 ms to start-up: only processes that use S3 load it. */
const loadSdk = (): Promise<Sdk> => (sdk ??= import("@aws-sdk/client-s3"));

export type S3BlobStoreOptions = {
  bucket: string;
  /** Folder-like prefix for every object; leading and trailing slashes are ignored. */
  prefix?: string;
} & (
  | {
      /** A configured client (region, credentials, an endpoint for S3-compatible servers). */
      client: S3Client;
    }
  | {
      /** Or the configuration of a client the store creates on first use. */
      clientConfig: S3ClientConfig;
    }
);

/**
 * Blobs as S3 objects at `<prefix>/<first two hex>/<key>`, the same layout as the folder store.
 * Keys are the SHA-256 of the value, so an object never changes once written: a second put of the
 * same key rewrites identical bytes, which is harmless, and a single PUT is atomic in S3, so a
 * reader never sees half a blob.
 */
export class S3BlobStore implements BlobStore {
  readonly bucket: string;
  readonly prefix: string;
  private readonly options: S3BlobStoreOptions;
  private client?: Promise<S3Client>;

  constructor(options: S3BlobStoreOptions) {
    this.options = options;
    this.bucket = options.bucket;
    this.prefix = (options.prefix ?? "").replace(/^\/+|\/+$/g, "");
  }

  async put(key: string, data: string): Promise<void> {
    const objectKey = this.objectKey(key);
    const { client, sdk } = await this.connect();
    await client
      .send(
        new sdk.PutObjectCommand({
          Bucket: this.bucket,
          Key: objectKey,
          Body: data,
          ContentType: "application/json; charset=utf-8",
        }),
      )
      .catch((error: unknown) => this.fail(error, key, objectKey));
  }

  async get(key: string): Promise<string> {
    const objectKey = this.objectKey(key);
    const { client, sdk } = await this.connect();
    const response = await client
      .send(new sdk.GetObjectCommand({ Bucket: this.bucket, Key: objectKey }))
      .catch((error: unknown) => this.fail(error, key, objectKey));
    if (response.Body === undefined) throw new Error(`S3 returned no body for ${objectKey}`);
    return response.Body.transformToString("utf8");
  }

  /** Deleting a key that is not there succeeds, as in the folder store. */
  async delete(key: string): Promise<void> {
    const objectKey = this.objectKey(key);
    const { client, sdk } = await this.connect();
    await client
      .send(new sdk.DeleteObjectCommand({ Bucket: this.bucket, Key: objectKey }))
      .catch((error: unknown) => this.fail(error, key, objectKey));
  }

  /** Where the store lives, as `s3://bucket/prefix` (for messages and logs). */
  toString(): string {
    return this.url("");
  }

  private async connect(): Promise<{ client: S3Client; sdk: Sdk }> {
    const options = this.options;
    this.client ??=
      "client" in options
        ? Promise.resolve(options.client)
        : loadSdk().then(({ S3Client }) => new S3Client(options.clientConfig));
    const [client, sdk] = await Promise.all([this.client, loadSdk()]);
    return { client, sdk };
  }

  /** The two failures an operator can act on get a message saying what to do; others pass. */
  private fail(error: unknown, key: string, objectKey: string): never {
    // By name, not instanceof: a client from another copy of the SDK throws its own classes.
    const name = (error as { name?: unknown } | null)?.name;
    if (name === "NoSuchKey") {
      throw new RewindError(
        "NOT_FOUND",
        `The blob ${key} is missing from ${this.url(objectKey)}: a value refers to it, so it was ` +
          "deleted outside Rewind (check the bucket's lifecycle rules and REWIND_BLOB_URL)",
        { bucket: this.bucket, objectKey },
      );
    }
    if (name === "NoSuchBucket") {
      throw new RewindError(
        "UNAVAILABLE",
        `The bucket ${this.bucket} named by REWIND_BLOB_URL does not exist: create it, or point ` +
          "REWIND_BLOB_URL (and REWIND_S3_ENDPOINT for an S3-compatible server) at one that does",
        { bucket: this.bucket, objectKey },
      );
    }
    throw error;
  }

  private url(objectKey: string): string {
    return `s3://${this.bucket}/${objectKey === "" ? this.prefix : objectKey}`;
  }

  private objectKey(key: string): string {
    if (!/^[0-9a-f]{64}$/.test(key)) throw new TypeError(`not a blob key: ${key}`);
    const name = `${key.slice(0, 2)}/${key}`;
    return this.prefix === "" ? name : `${this.prefix}/${name}`;
  }
}

import {
  DeleteObjectCommand,
  GetObjectCommand,
  NoSuchKey,
  PutObjectCommand,
  type S3Client,
} from "@aws-sdk/client-s3";
import { RewindError } from "@rewind/core";
import type { BlobStore } from "./blobs.js";

export interface S3BlobStoreOptions {
  /** A configured client (region, credentials, and for S3-compatible servers an endpoint). */
  client: S3Client;
  bucket: string;
  /** Folder-like prefix for every object; leading and trailing slashes are ignored. */
  prefix?: string;
}

/**
 * Blobs as S3 objects at `<prefix>/<first two hex>/<key>`, the same layout as the folder store.
 * Keys are the SHA-256 of the value, so an object never changes once written: a second put of the
 * same key rewrites identical bytes, which is harmless, and a single PUT is atomic in S3, so a
 * reader never sees half a blob.
 */
export class S3BlobStore implements BlobStore {
  readonly bucket: string;
  readonly prefix: string;
  private readonly client: S3Client;

  constructor(options: S3BlobStoreOptions) {
    this.client = options.client;
    this.bucket = options.bucket;
    this.prefix = (options.prefix ?? "").replace(/^\/+|\/+$/g, "");
  }

  async put(key: string, data: string): Promise<void> {
    await this.client.send(
      new PutObjectCommand({
        Bucket: this.bucket,
        Key: this.objectKey(key),
        Body: data,
        ContentType: "application/json; charset=utf-8",
      }),
    );
  }

  async get(key: string): Promise<string> {
    const objectKey = this.objectKey(key);
    try {
      const response = await this.client.send(
        new GetObjectCommand({ Bucket: this.bucket, Key: objectKey }),
      );
      if (response.Body === undefined) throw new Error(`S3 returned no body for ${objectKey}`);
      return await response.Body.transformToString("utf8");
    } catch (error) {
      if (error instanceof NoSuchKey) {
        throw new RewindError(
          "NOT_FOUND",
          `The blob ${key} is missing from ${this.url(objectKey)}: a value refers to it, so it was ` +
            "deleted outside Rewind (check the bucket's lifecycle rules and REWIND_BLOB_URL)",
          { bucket: this.bucket, objectKey },
        );
      }
      throw error;
    }
  }

  /** Deleting a key that is not there succeeds, as in the folder store. */
  async delete(key: string): Promise<void> {
    await this.client.send(new DeleteObjectCommand({ Bucket: this.bucket, Key: this.objectKey(key) }));
  }

  /** Where the store lives, as `s3://bucket/prefix` (for messages and logs). */
  toString(): string {
    return this.url("");
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

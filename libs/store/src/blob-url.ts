import path from "node:path";
import { fileURLToPath } from "node:url";
import { RewindError } from "@rewind/core";
import { FolderBlobStore, type BlobStore } from "./blobs.js";
import { S3BlobStore } from "./s3-blobs.js";

/** Where `REWIND_BLOB_URL` says blobs live. */
export type BlobLocation =
  { kind: "s3"; bucket: string; prefix: string } | { kind: "folder"; path: string };

const S3_FORM =
  "s3://bucket/prefix (a bucket of 3 to 63 lowercase letters, digits, dots or hyphens)";

/**
 * Reads `REWIND_BLOB_URL`: `s3://bucket/prefix` is an S3 bucket; a plain path or a `file://` URL is
 * a folder; unset or empty is `<dataDir>/blobs`. Throws INVALID_INPUT for a malformed `s3:` URL
 * or a scheme Rewind does not store blobs in, so a typo fails at start-up rather than writing
 * blobs into a folder named `gs:`.
 */
export function parseBlobUrl(url: string | undefined, dataDir: string): BlobLocation {
  if (url === undefined || url.trim() === "") {
    return { kind: "folder", path: path.resolve(dataDir, "blobs") };
  }
  if (/^s3:/i.test(url)) return parseS3Url(url);
  if (/^file:/i.test(url)) {
    try {
      return { kind: "folder", path: fileURLToPath(url) };
    } catch (error) {
      throw invalid(`REWIND_BLOB_URL ${url} is not a usable file URL (${String(error)})`);
    }
  }
  // Two letters at least, so a Windows drive (`C:\blobs`) is still a path.
  const scheme = /^([a-z][a-z0-9+.-]+):\/\//i.exec(url)?.[1];
  if (scheme !== undefined) {
    throw invalid(
      `REWIND_BLOB_URL ${url} has the scheme ${scheme}:, which Rewind does not store blobs in; ` +
        `use ${S3_FORM}, a folder path, or a file:// URL`,
    );
  }
  return { kind: "folder", path: path.resolve(url) };
}

/**
 * The blob store `REWIND_BLOB_URL` names. For S3 the client is configured from the environment:
 * - `REWIND_S3_ENDPOINT` (else `AWS_ENDPOINT_URL_S3`, else `AWS_ENDPOINT_URL`): an S3-compatible
 *   server such as MinIO; with an endpoint, requests use path-style addressing and the region
 *   defaults to us-east-1.
 * - `AWS_REGION` (else `AWS_DEFAULT_REGION`, else the shared AWS config).
 * - credentials from the SDK's default chain: `AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`,
 *   `AWS_SESSION_TOKEN`, then `AWS_PROFILE` and the shared files, web identity, and the
 *   container or instance role.
 */
export function blobStoreFromUrl(url: string | undefined, dataDir: string): BlobStore {
  const location = parseBlobUrl(url, dataDir);
  if (location.kind === "folder") return new FolderBlobStore(location.path);
  const env = process.env;
  const endpoint =
    nonEmpty(env.REWIND_S3_ENDPOINT) ??
    nonEmpty(env.AWS_ENDPOINT_URL_S3) ??
    nonEmpty(env.AWS_ENDPOINT_URL);
  const region =
    nonEmpty(env.AWS_REGION) ??
    nonEmpty(env.AWS_DEFAULT_REGION) ??
    (endpoint === undefined ? undefined : "us-east-1");
  return new S3BlobStore({
    bucket: location.bucket,
    prefix: location.prefix,
    clientConfig: {
      ...(endpoint === undefined ? {} : { endpoint, forcePathStyle: true }),
      ...(region === undefined ? {} : { region }),
    },
  });
}

function parseS3Url(url: string): BlobLocation {
  const match = /^s3:\/\/([^/?#]*)(\/[^?#]*)?$/i.exec(url);
  const bucket = match?.[1] ?? "";
  if (
    match === null ||
    !/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/.test(bucket) ||
    bucket.includes("..")
  ) {
    throw invalid(
      `REWIND_BLOB_URL ${url} is not an S3 URL Rewind can use: expected ${S3_FORM}; ` +
        "set the endpoint of an S3-compatible server with REWIND_S3_ENDPOINT, not in the URL",
    );
  }
  let prefix: string;
  try {
    prefix = decodeURIComponent(match[2] ?? "").replace(/^\/+|\/+$/g, "");
  } catch {
    throw invalid(`REWIND_BLOB_URL ${url} has a badly escaped prefix: expected ${S3_FORM}`);
  }
  return { kind: "s3", bucket, prefix };
}

function invalid(message: string): RewindError {
  return new RewindError("INVALID_INPUT", message);
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value.trim() === "" ? undefined : value;
}

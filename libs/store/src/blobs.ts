import { mkdir, readFile, rename, rm, writeFile } from "node:fs/promises";
import path from "node:path";

/** Where values above 64 KiB live: a folder in the embedded default, S3 in production. */
export interface BlobStore {
  put(key: string, data: string): Promise<void>;
  get(key: string): Promise<string>;
  delete(key: string): Promise<void>;
}

/** Blobs as files, written atomically (temporary file, then rename), keyed by value ref. */
export class FolderBlobStore implements BlobStore {
  constructor(private readonly root: string) {}

  async put(key: string, data: string): Promise<void> {
    const file = this.file(key);
    await mkdir(path.dirname(file), { recursive: true });
    const temporary = `${file}.${process.pid}.tmp`;
    await writeFile(temporary, data);
    await rename(temporary, file);
  }

  get(key: string): Promise<string> {
    return readFile(this.file(key), "utf8");
  }

  async delete(key: string): Promise<void> {
    await rm(this.file(key), { force: true });
  }

  private file(key: string): string {
    if (!/^[0-9a-f]{64}$/.test(key)) throw new TypeError(`not a blob key: ${key}`);
    return path.join(this.root, key.slice(0, 2), key);
  }
}

import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { FolderBlobStore, SqlStore, migrate, openSqlClient } from "../src/index.js";
import { conformance, countFolderBlobs } from "./conformance.js";

conformance("PGlite", {
  async open() {
    const dir = mkdtempSync(path.join(tmpdir(), "rewind-pglite-"));
    const sql = await openSqlClient({ dataDir: dir });
    await migrate(sql);
    const blobDir = path.join(dir, "blobs");
    const blobs = new FolderBlobStore(blobDir);
    const store = new SqlStore(sql, blobs);
    return {
      store,
      sql,
      blobs,
      countBlobs: () => countFolderBlobs(blobDir),
      async close() {
        await store.close();
        rmSync(dir, { recursive: true, force: true });
      },
    };
  },
});

import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { FolderBlobStore, SqlStore, migrate, openSqlClient } from "../src/index.js";
import { createTestDatabase } from "../src/testing.js";
import { conformance, countFolderBlobs } from "./conformance.js";

conformance("Postgres", {
  async open() {
    const database = await createTestDatabase();
    const sql = await openSqlClient({ databaseUrl: database.url });
    await migrate(sql);
    const blobDir = mkdtempSync(path.join(tmpdir(), "rewind-blobs-"));
    const blobs = new FolderBlobStore(blobDir);
    const store = new SqlStore(sql, blobs);
    return {
      store,
      sql,
      blobs,
      countBlobs: () => countFolderBlobs(blobDir),
      async close() {
        await store.close();
        await database.drop();
        rmSync(blobDir, { recursive: true, force: true });
      },
    };
  },
});

import { readFileSync, unlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import { RewindError } from "@rewind/core";

/**
 * One process at a time on an embedded database folder. Two PGlite instances on one folder each
 * believe they own it: writes of one are lost to the other (`rewind token create` beside a
 * running `rewind dev` printed a token the server never saw) and the folder may be corrupted.
 * The owner's pid is kept beside the folder, in `<dir>.pid` (inside it, it would be in the way of
 * the database's own first start); a pid that no longer runs (a kill -9) is stale
 * and taken over. Returns the release.
 */
export function lockDataDir(dir: string): () => void {
  const file = `${path.resolve(dir)}.pid`;
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      writeFileSync(file, `${process.pid}\n`, { flag: "wx", mode: 0o600 });
      return () => release(file);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
    }
    const owner = Number(readFileSync(file, "utf8").trim());
    // The same process may open its folder again (a test, a restart in place): it owns it.
    if (owner === process.pid) return () => {};
    if (Number.isInteger(owner) && owner > 0 && alive(owner)) {
      throw new RewindError(
        "CONFLICT",
        `The embedded database in ${dir} is open in another process (pid ${owner}, most likely \`rewind dev\`), and two processes on one folder would lose writes or corrupt it. ` +
          `Stop that process and run this command again (for an API token: stop \`rewind dev\`, run \`rewind token create\`, start it again; \`rewind dev\` prints its own token at start-up), ` +
          `or, if no Rewind process uses ${dir}, delete ${file}`,
        { lockedBy: owner },
      );
    }
    unlinkSync(file); // stale: its process is gone
  }
  throw new RewindError(
    "CONFLICT",
    `Another process took the embedded database in ${dir} at the same moment: run the command again once it has stopped`,
  );
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: it runs, as another user.
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

function release(file: string): void {
  try {
    if (Number(readFileSync(file, "utf8").trim()) === process.pid) unlinkSync(file);
  } catch {
    // already gone
  }
}

import type { ChildProcess } from "node:child_process";

/**
 * The API's address a spawned `rewind dev` prints in its banner, once it serves; rejects with
 * what it wrote to stderr if it exits or stays silent for `timeoutMs`.
 */
export function devUrl(dev: ChildProcess, timeoutMs = 50_000): Promise<string> {
  let out = "";
  let err = "";
  dev.stderr!.on("data", (c: Buffer) => (err += c.toString()));
  return new Promise<string>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`rewind dev did not start in ${timeoutMs / 1000} s:\n${err}`)),
      timeoutMs,
    );
    dev.stdout!.on("data", (c: Buffer) => {
      out += c.toString();
      const found = /API\s+(http:\/\/[^\s/]+)\/v1/.exec(out);
      if (found) {
        clearTimeout(timer);
        resolve(found[1]!);
      }
    });
    dev.once("exit", (code) => reject(new Error(`rewind dev exited with ${code}:\n${err}`)));
  });
}

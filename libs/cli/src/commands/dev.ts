import { existsSync } from "node:fs";
import { startDevPlatform } from "@rewind/dev";
import type { Toolset } from "@rewind/sdk";
import { loadToolsets } from "../load-toolset.js";
import { createLogger, lineLog } from "@rewind/telemetry";
import { green } from "../format.js";
import { assertPortFree, parsePort } from "../port.js";

/** `rewind dev`: the whole platform in one process, on PGlite under .rewind/ unless DATABASE_URL is set. */
export async function devCommand(options: { port?: string; toolset?: string[] }): Promise<number> {
  // Readable lines in the terminal (REWIND_LOG_FORMAT=json for a log pipeline).
  const log = lineLog(
    createLogger("dev", { format: process.env.REWIND_LOG_FORMAT === "json" ? "json" : "pretty" }),
  );
  const toolsets: Toolset[] = [];
  for (const file of options.toolset ?? []) toolsets.push(...(await loadToolsets(file)));
  const host = process.env.REWIND_HOST ?? "127.0.0.1";
  const port = parsePort(options.port);
  await assertPortFree(host, port);
  const databaseUrl = process.env.DATABASE_URL;
  const platform = await startDevPlatform({
    port,
    host,
    ...(databaseUrl ? { databaseUrl } : {}),
    ...(process.env.REWIND_BLOB_URL ? { blobUrl: process.env.REWIND_BLOB_URL } : {}),
    ...(process.env.REDIS_URL ? { redisUrl: process.env.REDIS_URL } : {}),
    toolsets,
    log,
  });
  // The token rides in the fragment, which the browser keeps to itself; the page stores it in the
  // tab and wipes it from the address bar.
  const dashboard = `${platform.url.replace("//127.0.0.1:", "//localhost:")}/dashboard/#token=${encodeURIComponent(platform.token)}`;
  const where =
    (databaseUrl ? "Postgres (DATABASE_URL)" : "the embedded database in .rewind/") +
    (process.env.REDIS_URL ? ", activations on Redis (REDIS_URL)" : "");
  process.stdout.write(
    [
      `${green("Rewind is running")} on ${where}`,
      `  API       ${platform.url}/v1   (OpenAPI: ${platform.url}/v1/openapi.json)`,
      `  token     ${platform.token}   (saved in .rewind/token; the CLI here uses it)`,
      `  dashboard ${dashboard}`,
      `  toolsets  ${toolsets.map((t) => `${t.name} (${[...t.tools.keys()].join(", ")})`).join("; ") || "none: pass --toolset FILE"}`,
      `  try       rewind run ${exampleScript()} --toolset ${toolsets[0]?.name ?? "default"} --wait`,
      "",
    ].join("\n"),
  );
  await new Promise<void>((resolve) => {
    const stop = () => resolve();
    process.once("SIGINT", stop);
    process.once("SIGTERM", stop);
  });
  log("stopping…");
  await platform.close();
  return 0;
}

/** A script the banner can suggest running from here: the scaffold's, the repository's, or any. */
function exampleScript(): string {
  for (const candidate of ["scripts/hello.ts", "examples/hello.ts"])
    if (existsSync(candidate)) return candidate;
  return "your-script.ts";
}

#!/usr/bin/env node
// The `rewind` command's entry, kept in the repository so that `npm ci` can link it before
// anything is built (npm links no bin whose file does not exist yet); the CLI itself is built
// into dist/ by `npm run build`.

// Every process the command starts (worker, API, dev, exec, replay) may run epoch-1 scripts, whose
// local time is the process's zone as recorded: UTC. The sandbox does not set it (no library
// changes its host process's clock); its launcher does, before anything reads the zone, and the
// processes it spawns inherit it.
process.env.TZ = "UTC";
try {
  await import("../dist/main.js");
} catch (error) {
  if (error?.code === "ERR_MODULE_NOT_FOUND" && String(error.message).includes("dist/main.js")) {
    process.stderr.write("rewind is not built yet: run `npm run build` first\n");
    process.exit(1);
  }
  throw error;
}

// Loaded into every long-lived child with `node --import` (see processes.ts): the harness holds the
// other end of this process's stdin, so when the harness dies in any way (even kill -9, when its
// own exit handlers never run) the pipe closes and this child stops too instead of living on.
process.stdin.on("error", () => {});
let gone = false;
const stop = () => {
  if (gone) return;
  gone = true;
  process.kill(process.pid, "SIGTERM");
  setTimeout(() => process.exit(1), 3_000).unref();
};
process.stdin.once("end", stop);
process.stdin.once("close", stop);
process.stdin.resume();
// Only a watcher: a child whose work is done still exits.
process.stdin.unref();

// Loaded into every long-lived child with `node --import` (see processes.ts).
//
// 1. The harness holds the other end of this process's stdin: when the harness dies in any way
//    (even kill -9, when its own exit handlers never run) the pipe closes and this child stops
//    too instead of living on.
// 2. After SIGTERM the child gets REWIND_BENCH_EXIT_MS (default 5 s) to leave by itself; if it is
//    still here, something keeps its event loop alive after shutdown. It says so on stderr (the
//    harness reports it) and calls process.exit, which still writes --cpu-prof profiles (a
//    SIGKILL would not).
let gone = false;
const stop = () => {
  if (gone) return;
  gone = true;
  process.kill(process.pid, "SIGTERM");
  setTimeout(() => process.exit(1), 3_000).unref();
};
process.stdin.on("error", () => {});
process.stdin.once("end", stop);
process.stdin.once("close", stop);
process.stdin.resume();
// Only a watcher: a child whose work is done still exits.
process.stdin.unref();

const exitMs = Number(process.env.REWIND_BENCH_EXIT_MS ?? 5_000);
process.on("SIGTERM", () => {
  const since = Date.now();
  setTimeout(() => {
    process.stderr.write(
      `[leash] still running ${Date.now() - since} ms after SIGTERM: exiting (a handle keeps the event loop alive)\n`,
    );
    process.exit(0);
  }, exitMs).unref();
});

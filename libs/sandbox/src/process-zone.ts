import { RewindError } from "@rewind/core";

/**
 * Epoch 1's guest runtime computes local time (`new Date(2024, 0, 1)`, `getHours()`, `toString()`)
 * in the process's own time zone, and its runs were recorded with TZ=UTC: the same run on a
 * process in another zone computes another journal. The sandbox no longer sets TZ for the whole
 * process when it is imported (that changed local time for every tool in the worker and the API);
 * the process's launcher does (bin/rewind.mjs, the image's environment, the test runner's env),
 * and a sandbox made in a process whose zone is not UTC refuses to start instead of computing
 * journals that replay differently elsewhere.
 */
export function processZoneProblem(): string | undefined {
  const zone = new Intl.DateTimeFormat("en-US").resolvedOptions().timeZone;
  // A zone at UTC today may not be in summer (Europe/London): both offsets must be 0.
  const offsets = [new Date(2024, 0, 1), new Date(2024, 6, 1)].map((d) => d.getTimezoneOffset());
  if (/^(Etc\/)?(UTC|GMT|Universal|Zulu)$/.test(zone) && offsets.every((o) => o === 0)) return;
  return (
    `This process's local time zone is ${zone} (TZ=${process.env.TZ ?? "unset"}), and the sandbox's ` +
    `epoch 1 computes scripts' local time in the process's zone, which it was recorded with as UTC. ` +
    `Start the process with TZ=UTC (the rewind command and the image do), or set process.env.TZ = "UTC" ` +
    `before making a Sandbox.`
  );
}

export function assertProcessZoneIsUtc(): void {
  const problem = processZoneProblem();
  if (problem !== undefined) throw new RewindError("SANDBOX_ERROR", problem);
}

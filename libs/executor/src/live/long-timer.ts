/**
 * The longest delay Node's setTimeout honours: past 2^31-1 ms it fires after 1 ms instead (with
 * a warning), so a 30-day sleep armed as one timeout woke the executor ~900 times a second.
 */
export const LONGEST_TIMEOUT_MS = 2 ** 31 - 1;

/**
 * Calls `onDue` once `now()` has reached `due`, however far away: armed in steps of at most
 * LONGEST_TIMEOUT_MS (a 30-day timer wakes twice, a year's 15 times). setTimeout may also fire a
 * little early; the rest is waited out the same way. `keep` receives each handle, to clear it.
 * The handles are unref'd (a run's timer is a row in the store) unless `ref` says otherwise.
 */
export function armUntil(
  due: number,
  now: () => number,
  onDue: () => void,
  keep: (handle: NodeJS.Timeout) => void,
  ref = false,
): void {
  const wake = () => {
    const left = due - now();
    if (left > 0) arm(left);
    else onDue();
  };
  const arm = (left: number) => {
    const handle = setTimeout(wake, Math.min(left, LONGEST_TIMEOUT_MS));
    if (!ref) handle.unref();
    keep(handle);
  };
  arm(Math.max(0, due - now()));
}

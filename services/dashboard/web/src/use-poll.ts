import { useEffect, useRef, useState } from "preact/hooks";
import { ApiError } from "./api.js";

/** How often a page asks the API again while open (the issue asks for at most 2 s). */
export const REFRESH_MS = 2_000;

export interface Polled<T> {
  data: T | undefined;
  error: string | undefined;
  /** Asks again now (after an action), not on the next tick. */
  refresh: () => void;
}

/**
 * Calls `load` now and every REFRESH_MS until the component goes or `deps` change; one call at a
 * time, the next planned only when it ends, so a slow API is never piled on. A 401 goes to
 * `refused` (the token is no good); other errors are shown, and the last data kept.
 */
export function usePoll<T>(
  load: () => Promise<T>,
  deps: readonly unknown[],
  refused: (message: string) => void,
  options: { stopWhen?: (data: T) => boolean } = {},
): Polled<T> {
  const [data, setData] = useState<T>();
  const [error, setError] = useState<string>();
  const kick = useRef<() => void>(() => {});
  useEffect(() => {
    let stopped = false;
    let timer: number | undefined;
    let running = false;
    let again = false;
    setData(undefined);
    const tick = async () => {
      if (running) {
        again = true;
        return;
      }
      running = true;
      window.clearTimeout(timer);
      let stop = false;
      try {
        const next = await load();
        if (stopped) return;
        setData(next);
        setError(undefined);
        stop = options.stopWhen?.(next) ?? false;
      } catch (failure) {
        if (stopped) return;
        if (failure instanceof ApiError && failure.status === 401) {
          refused(`The API refused the token: ${failure.message}`);
          return;
        }
        setError(failure instanceof Error ? failure.message : String(failure));
      } finally {
        running = false;
      }
      if (stopped) return;
      if (again) {
        again = false;
        void tick();
      } else if (!stop) timer = window.setTimeout(() => void tick(), REFRESH_MS);
    };
    kick.current = () => void tick();
    void tick();
    return () => {
      stopped = true;
      window.clearTimeout(timer);
    };
    // The caller names what the load depends on (deps), as useEffect would.
  }, deps);
  return { data, error, refresh: () => kick.current() };
}

import { useState } from "preact/hooks";

/**
 * An operator's action on a run, one at a time: `busy` while it runs (the buttons wait), then its
 * outcome in a line ("what: answer" or "what refused: the API's message"), and `changed` so the
 * page reads the run again.
 */
export function useAction(changed: () => void) {
  const [busy, setBusy] = useState(false);
  const [outcome, setOutcome] = useState<string>();
  async function act(what: string, action: () => Promise<string>) {
    setBusy(true);
    try {
      setOutcome(`${what}: ${await action()}`);
      changed();
    } catch (error) {
      setOutcome(`${what} refused: ${(error as Error).message}`);
    } finally {
      setBusy(false);
    }
  }
  return { busy, outcome, act };
}

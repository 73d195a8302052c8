import { Sandbox } from "@rewind/sandbox";

let sandbox: Sandbox | undefined;

/**
 * The API's own sandbox, for checks that re-execute scripts without calling anything (replay
 * checks, fork previews). Async mode: a heavy script never stalls the API's event loop.
 */
export function apiSandbox(): Sandbox {
  return (sandbox ??= new Sandbox({ mode: "async" }));
}

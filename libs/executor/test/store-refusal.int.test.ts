/**
 * A commit the store refuses for what is in it (a data exception, SQLSTATE class 22) is refused
 * again on every retry: a run hitting one was replayed and refused once a second, forever, shown
 * as running (issue 17: U+0000 or a lone surrogate in a line of output, before the store kept
 * them). Past the bound, the run is failed with what the store said; its neighbours go on.
 */
import { describe, expect, it } from "vitest";
import { defineToolset } from "@rewind/core";
import { Executor, SandboxProcesses } from "@rewind/executor";
import { Sandbox, compileScript } from "@rewind/sandbox";
import type { RunAppend, Store } from "@rewind/store";
import { createRun, until, useTestStore } from "./harness.js";

let store: Store;
useTestStore("refusal", (made) => (store = made));

/** The store, refusing any commit that journals the line "poison" as Postgres refuses bad text. */
function refusing(inner: Store): Store {
  const refuse = (appends: readonly RunAppend[]) =>
    appends.some((a) => a.entries.some((e) => e.kind === "output" && e.text === "poison\n"));
  return new Proxy(inner, {
    get(target, key, receiver) {
      if (key !== "commit") return Reflect.get(target, key, receiver) as unknown;
      return async (appends: RunAppend[]) => {
        if (refuse(appends))
          throw Object.assign(new Error("unsupported Unicode escape sequence"), { code: "22P05" });
        return target.commit(appends);
      };
    },
  });
}

describe.each([
  ["an in-process", () => new Sandbox()],
  ["a supervised", () => new SandboxProcesses()],
] as const)("with %s sandbox", (_, makeSandbox) => {
  it("fails a run whose commits the store refuses, past the bound, naming what it said", async () => {
    const sandbox = makeSandbox();
    const ended = new Map<string, string>();
    const errors: unknown[] = [];
    const exec = new Executor({
      store: refusing(store),
      sandbox,
      toolsets: new Map([["refusal", defineToolset("refusal", {})]]),
      owner: "refusal-1",
      maxAttempts: 3,
      onEnded: (id, status) => ended.set(id, status),
      onError: (_id, error) => errors.push(error),
    });
    try {
      const compile = (source: string) => compileScript({ source, filename: "refusal.ts" });
      const poisoned = await createRun(
        store,
        await compile(`export default async () => { console.log("poison"); return 1; };`),
        { toolset: "refusal", epoch: 2 },
      );
      const honest = await createRun(
        store,
        await compile(`export default async () => { console.log("fine"); return 2; };`),
        { toolset: "refusal", epoch: 2 },
      );
      await exec.activate(poisoned);
      await exec.activate(honest);
      await until(() => ended.has(poisoned) && ended.has(honest), 30_000);
      expect(errors).toHaveLength(3); // refused three times, then failed at the next load
      const failed = await store.getRun(poisoned);
      expect(failed?.status).toBe("failed");
      expect(failed?.error?.code).toBe("SANDBOX_ERROR");
      expect(failed?.error?.message).toContain("refused to journal what the run did after seq 1");
      expect(failed?.error?.message).toContain(
        "3 times in a row: unsupported Unicode escape sequence (SQLSTATE 22P05)",
      );
      expect(await store.getRun(honest)).toMatchObject({ status: "completed", result: 2 });
    } finally {
      await exec.close();
      sandbox.dispose();
    }
  }, 60_000);
});

/**
 * REWIND_NEW_RUN_EPOCH: an API that starts new runs in an older released epoch, and the setting's
 * refusals, each naming the variable and what it may be.
 */
import { describe, expect, it } from "vitest";
import { newRunEpoch } from "@rewind/sandbox";
import { newRunEpochFrom } from "../src/index.js";
import { openHarness, startRun } from "./harness.js";

describe("REWIND_NEW_RUN_EPOCH", () => {
  it("is the newest epoch this runtime serves when unset or empty", () => {
    expect(newRunEpochFrom({}, "rewind api")).toBeUndefined();
    expect(newRunEpochFrom({ REWIND_NEW_RUN_EPOCH: "" }, "rewind api")).toBeUndefined();
    expect(newRunEpochFrom({ REWIND_NEW_RUN_EPOCH: "1" }, "rewind api")).toBe(1);
  });

  it("refuses what is not a released epoch this build supports, saying which are", () => {
    const refused = (value: string) => () =>
      newRunEpochFrom({ REWIND_NEW_RUN_EPOCH: value }, "rewind dev");
    expect(refused("x")).toThrow(
      /^rewind dev cannot start: REWIND_NEW_RUN_EPOCH must be an epoch number/,
    );
    expect(refused("1.5")).toThrow(/REWIND_NEW_RUN_EPOCH must be an epoch number/);
    expect(refused("99")).toThrow(
      /REWIND_NEW_RUN_EPOCH: epoch 99 is not one this build supports: choose one of 1, 2, 3, 4/,
    );
  });

  it("starts the API's new runs in the epoch it names", async () => {
    const h = await openHarness({ epoch: 1 });
    try {
      const id = await startRun(h);
      expect(await h.store.getRun(id)).toMatchObject({ epoch: 1 });
      expect((await h.store.readJournal(id))[0]).toMatchObject({ kind: "run.started", epoch: 1 });
      expect(newRunEpoch()).not.toBe(1); // so it is the setting, not the default
    } finally {
      await h.close();
    }
  });
});

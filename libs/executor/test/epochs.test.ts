/**
 * Pins each supported epoch's code. A run recorded under epoch N replays only if the sandbox's
 * runtime and the host's matching code are still epoch N's: changing either breaks every such
 * run's replay unless the change cannot alter what a script computes or how it is matched.
 */
import { describe, expect, it } from "vitest";
import {
  CURRENT_EPOCH,
  EPOCHS,
  SUPPORTED_EPOCHS,
  currentEnvironment,
  epochSupport,
  findEpoch,
} from "@rewind/sandbox";
import { matchingDigest, sandboxDigest } from "./epoch-digests.js";

const HOW =
  "Release a new epoch for this change (a new row in libs/sandbox/src/epochs.ts, CURRENT_EPOCH, " +
  "and its corpus), or, if replays cannot be affected (a refactor that computes exactly the same), " +
  "update the digest on purpose with a comment saying why";

describe("determinism epochs", () => {
  for (const epoch of SUPPORTED_EPOCHS) {
    const release = findEpoch(epoch)!;

    it(`epoch ${epoch}: the sandbox runtime is the released one`, () => {
      expect(
        sandboxDigest(),
        `The code the sandbox loads (libs/sandbox/src/guest/) changed since epoch ${epoch} was ` +
          `released: runs of epoch ${epoch} may no longer replay. ${HOW}.`,
      ).toBe(release.sandboxDigest);
    });

    it(`epoch ${epoch}: the host's matching code is the released one`, () => {
      expect(
        matchingDigest(),
        `The code that matches replays against journals (libs/journal/src/engine.ts, canonical ` +
          `JSON, libs/sandbox/src/commands.ts) changed since epoch ${epoch} was released: runs of ` +
          `epoch ${epoch} may no longer replay. ${HOW}.`,
      ).toBe(release.matchingDigest);
    });
  }

  it("releases epochs in order, each once, and starts new runs in the newest supported one", () => {
    const numbers = EPOCHS.map((release) => release.epoch);
    expect(numbers).toEqual([...new Set(numbers)].sort((a, b) => a - b));
    for (const epoch of SUPPORTED_EPOCHS) expect(numbers).toContain(epoch);
    expect(CURRENT_EPOCH).toBe(Math.max(...SUPPORTED_EPOCHS));
  });

  it("this machine's V8 and isolated-vm are the current epoch's", () => {
    const support = epochSupport();
    expect(support.refused).toEqual([]);
    expect(support.epochs).toEqual([...SUPPORTED_EPOCHS]);
    expect(currentEnvironment()).toMatchObject({
      v8: findEpoch(CURRENT_EPOCH)!.environment.v8,
      isolatedVm: findEpoch(CURRENT_EPOCH)!.environment.isolatedVm,
    });
  });

  it("refuses an epoch whose V8 or isolated-vm this process does not have, saying which", () => {
    const wanted = findEpoch(1)!.environment;
    const support = epochSupport({
      claims: [1],
      environment: { ...wanted, v8: "12.4.254.21", isolatedVm: "6.0.0" },
    });
    expect(support.epochs).toEqual([]);
    expect(support.refused).toHaveLength(1);
    expect(support.refused[0]!.reason).toContain("v8 12.4.254.21 where the epoch has 11.3.244.8");
    expect(support.refused[0]!.reason).toContain("isolatedVm 6.0.0 where the epoch has 5.0.4");
    expect(support.refused[0]!.reason).toMatch(/wait for a worker that matches/);
  });

  it("refuses epochs this build does not support, and only warns about Intl data", () => {
    const wanted = findEpoch(1)!.environment;
    const support = epochSupport({
      claims: [1, 99],
      environment: { ...wanted, tz: "2030a" },
      maxValueBytes: 1024,
    });
    expect(support.epochs).toEqual([1]);
    expect(support.refused.map((r) => r.epoch)).toEqual([99]);
    expect(support.refused[0]!.reason).toMatch(/epoch 99 is not supported by this build/);
    expect(support.warnings.join("\n")).toMatch(/tz 2025c, this process has 2030a/);
    expect(support.warnings.join("\n")).toMatch(/maxValueBytes 4194304, this sandbox has 1024/);
  });

  it("warns when the sandbox runtime is not the epoch's", () => {
    const support = epochSupport({ claims: [1], sandboxDigest: "sha256:changed" });
    expect(support.epochs).toEqual([1]);
    expect(support.warnings.join("\n")).toMatch(/release a new epoch before deploying it/);
  });
});

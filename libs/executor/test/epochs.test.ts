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
  isDraft,
  newRunEpoch,
  newRunEpochProblem,
  runtimeOf,
  guestEntry,
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
        sandboxDigest(epoch),
        `The code the sandbox loads for epoch ${epoch} (libs/sandbox/src/${guestEntry(epoch)}) changed since epoch ${epoch} was ` +
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

  it("numbers epochs in order, each once, with CURRENT_EPOCH the newest released", () => {
    const numbers = EPOCHS.map((release) => release.epoch);
    expect(numbers).toEqual([...new Set(numbers)].sort((a, b) => a - b));
    for (const epoch of SUPPORTED_EPOCHS) expect(numbers).toContain(epoch);
    const released = EPOCHS.filter((release) => !isDraft(release)).map((r) => r.epoch);
    expect(CURRENT_EPOCH).toBe(Math.max(...released));
  });

  it("names one runtime per epoch: no two epochs share V8, isolated-vm and Intl data but 1 and its Node 20 successor", () => {
    const identity = (e: number) => {
      const { unicode: _u, cldr: _c, ...rest } = findEpoch(e)!.environment;
      return JSON.stringify(rest);
    };
    expect(identity(2)).toBe(identity(1));
    expect(new Set([1, 3, 4].map(identity)).size).toBe(3);
    // Node 20's V8 is epoch 1's and 2's; 24's is 3's; 26's is 4's.
    expect(
      [1, 2, 3, 4].map((e) => findEpoch(e)!.environment.v8.split(".").slice(0, 2).join(".")),
    ).toEqual(["11.3", "11.3", "13.6", "14.6"]);
  });

  it("this machine's runtime serves exactly the epochs whose runtime it is", () => {
    const support = epochSupport();
    const runtime = EPOCHS.filter((r) => r.environment.v8 === currentEnvironment().v8);
    // Drafts only where this runtime has no released epoch (Node 20 serves 1 and 2).
    const released = runtime.filter((r) => !isDraft(r));
    const mine = (released.length > 0 ? released : runtime).map((r) => r.epoch);
    expect(
      mine.length,
      `no epoch names V8 ${currentEnvironment().v8}: define one for this Node`,
    ).toBeGreaterThan(0);
    expect(support.epochs).toEqual(mine);
    // Other runtimes' epochs are not this worker's to report, unless it serves none.
    expect(support.refused).toEqual([]);
    expect(currentEnvironment()).toMatchObject({
      v8: findEpoch(mine[0]!)!.environment.v8,
      isolatedVm: findEpoch(mine[0]!)!.environment.isolatedVm,
      icu: findEpoch(mine[0]!)!.environment.icu,
      tz: findEpoch(mine[0]!)!.environment.tz,
    });
  });

  it("starts new runs in the newest released epoch the runtime serves, else its newest draft", () => {
    const node20 = { ...findEpoch(2)!.environment };
    const node24 = { ...findEpoch(3)!.environment };
    const node26 = { ...findEpoch(4)!.environment };
    expect(newRunEpoch(node20)).toBe(2); // epoch 1 stays for the runs it has
    expect(newRunEpoch(node24)).toBe(3);
    expect(newRunEpoch(node26)).toBe(4);
    // A runtime no epoch names (Node 22) serves none: its runs go to the newest released epoch.
    expect(newRunEpoch({ ...node24, v8: "12.4.254.21", isolatedVm: "6.0.0" })).toBe(CURRENT_EPOCH);
  });

  it("refuses another runtime's epoch when it is claimed, naming every difference", () => {
    const support = epochSupport({ claims: [1, 3], environment: findEpoch(4)!.environment });
    expect(support.epochs).toEqual([]);
    expect(support.refused.map((r) => r.epoch)).toEqual([1, 3]);
    expect(support.refused[0]!.reason).toContain("v8 14.6.202.34 where the epoch has 11.3.244.8");
    expect(support.refused[0]!.reason).toContain("isolatedVm 7.0.1 where the epoch has 5.0.4");
    expect(support.refused[0]!.reason).toContain("icu 78.3 where the epoch has 78.2");
    expect(support.refused[1]!.reason).toContain("v8 14.6.202.34 where the epoch has 13.6.233.17");
  });

  it("reports every refusal when the runtime serves none of the epochs", () => {
    const support = epochSupport({
      environment: { ...findEpoch(3)!.environment, v8: "12.4.254.21", isolatedVm: "6.0.0" },
    });
    expect(support.epochs).toEqual([]);
    expect(support.refused.map((r) => r.epoch)).toEqual([...SUPPORTED_EPOCHS]);
  });

  it("serves every released epoch of its runtime, and only those", () => {
    expect(epochSupport({ environment: findEpoch(2)!.environment }).epochs).toEqual([1, 2]);
    expect(epochSupport({ environment: findEpoch(3)!.environment }).epochs).toEqual([3]);
    expect(epochSupport({ environment: findEpoch(4)!.environment }).epochs).toEqual([4]);
    expect(epochSupport({ claims: [1, 2], environment: findEpoch(2)!.environment }).epochs).toEqual(
      [1, 2],
    );
  });

  it("releases epochs 2, 3 and 4 together, each naming its runtime and the unhandled-rejection limit", () => {
    expect(EPOCHS.filter(isDraft)).toEqual([]);
    expect([2, 3, 4].map((e) => findEpoch(e)!.released)).toEqual(Array(3).fill("2026-12-01"));
    expect(CURRENT_EPOCH).toBe(4);
    expect([1, 2, 3, 4].map((e) => runtimeOf(findEpoch(e)!))).toEqual([
      "Node 20.20 with isolated-vm 5.0.4",
      "Node 20.20 (end of life) with isolated-vm 5.0.4",
      "Node 24.22 (LTS) with isolated-vm 7.0.1, prebuilt",
      "Node 26.12 (current LTS) with isolated-vm 7.0.1, prebuilt",
    ]);
    for (const e of [2, 3, 4])
      expect(findEpoch(e)!.notes).toMatch(/Unhandled rejections as in epoch 1 \(a known limit/);
    const support = epochSupport({ claims: [3], environment: findEpoch(3)!.environment });
    expect(support).toEqual({ epochs: [3], refused: [], warnings: [] });
  });

  it("lets an operator start new runs in any released epoch this build supports, and no other", () => {
    for (const e of SUPPORTED_EPOCHS) expect(newRunEpochProblem(e)).toBeUndefined();
    expect(newRunEpochProblem(99)).toMatch(
      /^epoch 99 is not one this build supports: choose one of 1, 2, 3, 4/,
    );
    expect(newRunEpochProblem(0)).toMatch(/not one this build supports/);
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

  it("refuses epochs this build does not support, and an epoch whose Intl data differs", () => {
    const wanted = findEpoch(1)!.environment;
    const support = epochSupport({
      claims: [1, 99],
      environment: { ...wanted, tz: "2030a" },
    });
    expect(support.epochs).toEqual([]);
    expect(support.refused.map((r) => r.epoch)).toEqual([1, 99]);
    expect(support.refused[0]!.reason).toContain("tz 2030a where the epoch has 2025c");
    expect(support.refused[1]!.reason).toMatch(/epoch 99 is not supported by this build/);
    const cldr = epochSupport({
      claims: [3],
      environment: { ...findEpoch(3)!.environment, cldr: "49.0" },
    });
    expect(cldr.refused[0]!.reason).toContain("cldr 49.0 where the epoch has 48.0");
  });

  it("warns when the sandbox's value limit is not the epoch's", () => {
    const support = epochSupport({
      claims: [1],
      environment: findEpoch(1)!.environment,
      maxValueBytes: 1024,
    });
    expect(support.epochs).toEqual([1]);
    expect(support.warnings.join("\n")).toMatch(/maxValueBytes 4194304, this sandbox has 1024/);
  });

  it("warns when the sandbox runtime is not the epoch's", () => {
    const support = epochSupport({
      claims: [1],
      environment: findEpoch(1)!.environment,
      sandboxDigest: "sha256:changed",
    });
    expect(support.epochs).toEqual([1]);
    expect(support.warnings.join("\n")).toMatch(/release a new epoch before deploying it/);
  });
});

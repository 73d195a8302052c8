import { expect, it } from "vitest";
import { isSeed, newRunId, newSeed } from "./ids.js";

it("makes run ids that sort by creation time, each with 80 fresh random bits", () => {
  const ids = Array.from({ length: 5_000 }, (_, i) => newRunId(1_700_000_000_000 + i));
  for (const id of ids) expect(id).toMatch(/^run_[0-9a-hjkmnp-tv-z]{26}$/);
  expect(new Set(ids).size).toBe(ids.length);
  expect([...ids].sort()).toEqual(ids);
  // The random part differs between two ids made in the same millisecond.
  expect(newRunId(5).slice(14)).not.toBe(newRunId(5).slice(14));
});

it("makes seeds of 64 hex digits, never the same twice across refills of the random pool", () => {
  // 4,096 bytes a pool: 1,000 seeds draw it about eight times over.
  const seeds = Array.from({ length: 1_000 }, () => newSeed());
  for (const seed of seeds) expect(isSeed(seed)).toBe(true);
  expect(new Set(seeds).size).toBe(seeds.length);
});

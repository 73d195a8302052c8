/** `rewind capture` against a real platform (docs/capture-policy.md). */
import { expect, it } from "vitest";
import { usePlatform } from "./platform-harness.js";

const h = usePlatform([]);

it("shows an empty policy, replaces it, shows a toolset's own, and refuses what does not parse", async () => {
  const shown = await h.rewind("capture");
  expect(shown.code).toBe(0);
  expect(shown.stdout).toContain("every toolset");
  expect(shown.stdout).toMatch(/fields\s+none/);

  const set = await h.rewind(
    "capture",
    "set",
    "--field",
    "$.card.number",
    "--field",
    "$..password",
    "--detector",
    "card-number",
    "--pattern",
    "ssn=\\d{3}-\\d{2}-\\d{4}",
  );
  expect(set.code).toBe(0);
  expect(set.stdout).toContain("fields     $.card.number, $..password");
  expect(set.stdout).toContain("detectors  card-number");
  expect(set.stdout).toContain("patterns   ssn=/\\d{3}-\\d{2}-\\d{4}/");

  expect((await h.rewind("capture", "set", "--toolset", "shop", "--detector", "email")).code).toBe(
    0,
  );
  const json = JSON.parse(
    (await h.rewind("capture", "show", "--toolset", "shop", "--json")).stdout,
  );
  expect(json).toMatchObject({
    namespace: "default",
    toolset: "shop",
    detectors: ["email"],
    fields: [],
  });
  expect(JSON.parse((await h.rewind("capture", "--json")).stdout)).toMatchObject({
    toolset: null,
    fields: ["$.card.number", "$..password"],
  });

  const wrong = await h.rewind("capture", "set", "--field", "card.number");
  expect(wrong.code).toBe(1);
  expect(wrong.stderr).toContain("body.fields.0");
  expect(wrong.stderr).toContain('must start with "$"');
  const pattern = await h.rewind("capture", "set", "--pattern", "nameonly");
  expect(pattern.code).toBe(1);
  expect(pattern.stderr).toContain("is not NAME=REGEX");
});

import { describe, expect, it } from "vitest";
import { PutCapturePolicyBody } from "./capture-policy.js";
import { parseJsonPath } from "./json-path.js";

describe("capture policy at the door", () => {
  it.each([
    ["$.card.number", 2],
    ["$.headers.authorization", 2],
    ["$['x-api-key']", 1],
    ["$.items[0].cvv", 3],
    ["$.items[*].cvv", 3],
    ["$..password", 1],
    ["$.*.token", 2],
  ])("takes %s", (path, steps) => {
    expect(parseJsonPath(path)).toMatchObject({ steps: { length: steps } });
  });

  it.each([
    ["card.number", /must start with "\$"/],
    ["$", /names the whole value/],
    ["$.", /a key must follow "\."/],
    ["$..", /a key must follow/],
    ["$[?(@.x)]", /unexpected "\["/],
    ["$['open", /not closed/],
  ])("refuses %s", (path, message) => {
    const parsed = parseJsonPath(path);
    expect("error" in parsed && parsed.error).toMatch(message);
  });

  it("names the field at fault: a path, a detector, a regex, its flags, a name used twice", () => {
    const issue = (body: unknown) => {
      const result = PutCapturePolicyBody.safeParse(body);
      return result.success ? undefined : result.error.issues[0]!.path.join(".");
    };
    expect(issue({ fields: ["$.a", "nope"] })).toBe("fields.1");
    expect(issue({ detectors: ["card-number", "passport"] })).toBe("detectors.1");
    expect(issue({ patterns: [{ name: "p", regex: "([a-z" }] })).toBe("patterns.0.regex");
    expect(issue({ patterns: [{ name: "p", regex: "x", flags: "gg" }] })).toBe("patterns.0.flags");
    expect(issue({ patterns: [{ name: "p", regex: "x", flags: "i".repeat(100_000) }] })).toBe(
      "patterns.0.flags",
    );
    expect(issue({ patterns: [{ name: "Bad Name", regex: "x" }] })).toBe("patterns.0.name");
    expect(
      issue({
        patterns: [
          { name: "p", regex: "x" },
          { name: "p", regex: "y" },
        ],
      }),
    ).toBe("patterns.1.name");
    expect(issue({ fields: [], extra: 1 })).toBe("");
    expect(PutCapturePolicyBody.parse({})).toEqual({ fields: [], detectors: [], patterns: [] });
  });
});

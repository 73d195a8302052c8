/** `rewind codec` against a real platform that holds payload codec keys (docs/codec.md). */
import { randomBytes } from "node:crypto";
import { expect, it } from "vitest";
import { usePlatform } from "./platform-harness.js";

// Read by the platform this file starts (rewind dev takes REWIND_CODEC_KEYS from its environment).
process.env.REWIND_CODEC_KEYS = `new:${randomBytes(32).toString("base64")},old:${randomBytes(32).toString("base64")}`;
const h = usePlatform([]);

it("shows the codec off, switches it on and off, and refuses a state it does not know", async () => {
  const shown = await h.rewind("codec");
  expect(shown.code).toBe(0);
  expect(shown.stdout).toContain("payload codec  off");
  expect(shown.stdout).toContain("keys           new, old; new values sealed with new");
  expect(shown.stdout).not.toMatch(/[A-Za-z0-9+/]{43}=/); // never a key itself

  const on = await h.rewind("codec", "set", "on");
  expect(on.code).toBe(0);
  expect(on.stdout).toContain("payload codec  on (aes-256-gcm)");
  const json = JSON.parse((await h.rewind("codec", "show", "--json")).stdout) as Record<
    string,
    unknown
  >;
  expect(json).toMatchObject({
    namespace: "default",
    enabled: true,
    encryptingKeyId: "new",
    keyIds: ["new", "old"],
  });

  expect((await h.rewind("codec", "set", "off")).stdout).toContain("payload codec  off");
  const wrong = await h.rewind("codec", "set", "maybe");
  expect(wrong.code).toBe(1);
  expect(wrong.stderr).toContain("say `rewind codec set on` or `rewind codec set off`");
});

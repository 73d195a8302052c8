import { Webhook } from "standardwebhooks";
import { describe, expect, it } from "vitest";
import { eventIdOf, signatureHeader } from "./signature.js";

const SECRET = "whsec_MfKQ9r0GdS6g9y0Jm7m5l9W3o3YbO8lq";
const OTHER = "whsec_C2FVsBQIhrscChlQIMV+b5sSYspob7oD";

describe("Standard Webhooks signatures", () => {
  it("signs as the reference library does", () => {
    const at = new Date(1_764_600_000_000);
    const body = '{"type":"run.completed"}';
    const ours = signatureHeader([SECRET], "msg_1", at.getTime() / 1000, body);
    expect(ours).toBe(new Webhook(SECRET).sign("msg_1", at, body));
  });

  it("gives one v1 signature per secret, each verifying on its own", () => {
    const now = Math.floor(Date.now() / 1000);
    const body = "{}";
    const header = signatureHeader([SECRET, OTHER], "msg_2", now, body);
    expect(header.split(" ")).toHaveLength(2);
    const headers = {
      "webhook-id": "msg_2",
      "webhook-timestamp": String(now),
      "webhook-signature": header,
    };
    expect(new Webhook(SECRET).verify(body, headers)).toEqual({});
    expect(new Webhook(OTHER).verify(body, headers)).toEqual({});
    expect(() => new Webhook(OTHER).verify("{ }", headers)).toThrow();
  });

  it("names an event by its run and seq, the same every time", () => {
    expect(eventIdOf("run_a", 2)).toBe(eventIdOf("run_a", 2));
    expect(eventIdOf("run_a", 2)).not.toBe(eventIdOf("run_a", 3));
    expect(eventIdOf("run_a", 2)).toMatch(/^msg_[0-9a-f]{24}$/);
  });
});

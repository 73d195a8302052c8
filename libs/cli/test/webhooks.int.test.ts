/**
 * `rewind webhooks` against `rewind dev` (the projector embedded, on the embedded database): an
 * endpoint added with the CLI receives a run's completion, signed (verified with the
 * `standardwebhooks` package), is listed with its delivery log, gets a redelivery under the same
 * webhook-id, and a private address is refused at `add`, naming the field.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { Webhook } from "standardwebhooks";
import { afterAll, beforeAll, expect, it } from "vitest";
import { Receiver } from "../../../services/projector/test/webhook-receiver.js";
import { devUrl } from "./dev-banner.js";

const root = fileURLToPath(new URL("../../..", import.meta.url));
const bin = path.join(root, "libs/cli/bin/rewind.mjs");
const examples = path.join(root, "examples");
const receiver = new Receiver(7251);
let dir = "";
let dev: ChildProcess | undefined;
let url = "";

beforeAll(async () => {
  await receiver.start();
  dir = mkdtempSync(path.join(tmpdir(), "rewind-dev-webhooks-"));
  const { DATABASE_URL: _d, REDIS_URL: _r, ...env } = process.env;
  dev = spawn(
    process.execPath,
    [bin, "dev", "--port", "7250", "--toolset", `${examples}/tools.ts`],
    {
      cwd: dir,
      env: { ...env, REWIND_WEBHOOK_ALLOW: "127.0.0.1", REWIND_WEBHOOK_RETRY_MS: "100" },
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  url = await devUrl(dev);
}, 60_000);

afterAll(async () => {
  if (dev !== undefined && dev.exitCode === null) {
    const exited = new Promise((resolve) => dev!.once("exit", resolve));
    dev.kill("SIGTERM");
    await exited;
  }
  await receiver.stop();
  rmSync(dir, { recursive: true, force: true });
});

/** The CLI, asynchronously: the receiver in this process must answer while it runs. */
function rewind(
  ...args: string[]
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [bin, ...args], {
      cwd: dir,
      env: { ...process.env, REWIND_URL: url },
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (c: Buffer) => (stdout += c.toString()));
    child.stderr.on("data", (c: Buffer) => (stderr += c.toString()));
    child.once("exit", (code) => resolve({ code, stdout, stderr }));
  });
}

async function until(what: string, check: () => boolean | Promise<boolean>, ms = 30_000) {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

it("adds an endpoint that receives a run's completion, signed, and redelivers it", async () => {
  const refused = await rewind("webhooks", "add", "http://10.0.0.1/hook");
  expect(refused.code).toBe(1);
  expect(refused.stderr).toMatch(/url: 10\.0\.0\.1: 10\.0\.0\.1 is a private address/);

  const added = await rewind(
    "webhooks",
    "add",
    receiver.url("/hook"),
    "--events",
    "run.completed",
    "--json",
  );
  expect(added.code, added.stderr).toBe(0);
  const endpoint = JSON.parse(added.stdout) as { id: string; secret: string };
  const list = await rewind("webhooks", "list");
  expect(list.stdout).toContain(endpoint.id);

  const run = await rewind(
    "run",
    `${examples}/hello.ts`,
    "--toolset",
    "shop",
    "--input",
    '{"name":"ada"}',
    "--wait",
  );
  expect(run.code, run.stderr).toBe(0);
  await until("the completion delivered", () => receiver.delivered("/hook").length === 1);
  const [first] = receiver.delivered("/hook");
  const payload = new Webhook(endpoint.secret).verify(first!.body, {
    "webhook-id": first!.id,
    "webhook-timestamp": first!.timestamp,
    "webhook-signature": first!.signature,
  }) as { type: string; data: { status: string; links: { run: string } } };
  expect(payload.type).toBe("run.completed");
  expect(payload.data.status).toBe("completed");
  // The link leads back to this platform, on the port it was given.
  expect(payload.data.links.run).toMatch(/^http:\/\/[^/]+:7250\/v1\/runs\/run_/);

  let deliveries: { deliveries: { id: string; eventId: string; status: string }[] } = {
    deliveries: [],
  };
  await until("the log to say delivered", async () => {
    deliveries = JSON.parse((await rewind("webhooks", "deliveries", endpoint.id, "--json")).stdout);
    return deliveries.deliveries[0]?.status === "delivered";
  });
  expect(deliveries.deliveries).toHaveLength(1);
  expect(deliveries.deliveries[0]!.eventId).toBe(first!.id);

  const again = await rewind("webhooks", "redeliver", endpoint.id, deliveries.deliveries[0]!.id);
  expect(again.code, again.stderr).toBe(0);
  await until("the redelivery", () => receiver.delivered("/hook").length === 2);
  expect(receiver.delivered("/hook")[1]!.id).toBe(first!.id);

  const rotated = await rewind("webhooks", "rotate", endpoint.id);
  expect(rotated.code, rotated.stderr).toBe(0);
  expect(rotated.stdout).toMatch(/^secret whsec_/);
  const removed = await rewind("webhooks", "remove", endpoint.id);
  expect(removed.code, removed.stderr).toBe(0);
  expect((await rewind("webhooks", "list")).stdout).toContain("no webhook endpoint");
}, 120_000);

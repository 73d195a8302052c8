// values.schema.json: every example is accepted (chart.test.ts renders them all), typical
// mistakes are refused by `helm template`/`helm install` with a message that names the value.
import { execFileSync } from "node:child_process";
import path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { REPO, render, renderError, requireTools } from "./helm.js";

beforeAll(requireTools);

describe("values.schema.json", () => {
  it("is what helm/scripts/values-schema.mjs makes", () => {
    execFileSync(process.execPath, [path.join(REPO, "helm/scripts/values-schema.mjs"), "--check"], {
      stdio: "pipe",
    });
  });

  const mistakes: { name: string; values: Record<string, unknown>; says: RegExp[] }[] = [
    {
      name: "a misspelt value",
      values: { api: { replica: 3 } },
      says: [/api/, /replica/, /additional propert/i],
    },
    {
      name: "a runtime that does not exist",
      values: { workers: { "3": { runtime: "node22" } } },
      says: [/workers\/3\/runtime|workers\.3\.runtime/, /node20.*node24.*node26|node22/],
    },
    {
      name: "a worker without its runtime",
      values: { workers: { "5": { replicas: 2 } } },
      says: [/runtime/, /missing|required/i],
    },
    {
      name: "an epoch that is not a number",
      values: { workers: { three: { runtime: "node24" } } },
      says: [/three/],
    },
    {
      name: "both autoscalers at once",
      values: { workerDefaults: { autoscaling: { mode: "both" } } },
      says: [/autoscaling\/mode|autoscaling\.mode/, /none.*hpa.*keda|both/],
    },
    {
      name: "an HPA asked to scale to zero",
      values: {
        workers: { "3": { runtime: "node24", autoscaling: { mode: "hpa", minReplicas: 0 } } },
      },
      says: [/minReplicas/, /minimum|>= 1|1/],
    },
    {
      name: "a TypeScript toolset (the image's root filesystem is read-only)",
      values: { workerDefaults: { toolsets: ["/app/toolsets/shop.ts"] } },
      says: [/toolsets/, /shop\.ts/],
    },
    {
      name: "a wait without its unit",
      values: { migrations: { waitTimeout: "10" } },
      says: [/waitTimeout/],
    },
    {
      name: "a port out of range",
      values: { api: { port: 70000 } },
      says: [/api\/port|api\.port/, /maximum|65535/],
    },
    {
      name: "a webhook allowlist given as one string",
      values: { projector: { webhooks: { allow: "10.0.0.0/8" } } },
      says: [/projector\/webhooks\/allow|projector\.webhooks\.allow/, /array/],
    },
    {
      name: "an endpoint's give-up time in words",
      values: { projector: { webhooks: { disableAfter: "5 days" } } },
      says: [/disableAfter/],
    },
    {
      name: "half the connections",
      values: { database: { url: "postgres://db/rewind" } },
      says: [/redis\.url/, /existingSecret/],
    },
  ];

  it.each(mistakes)("refuses $name, naming it", ({ values, says }) => {
    const message = renderError({ values });
    for (const pattern of says) expect(message).toMatch(pattern);
  });

  it("accepts what umbrella charts add at the root, and nothing else there", () => {
    expect(
      render({ values: { global: { anything: { at: "all" } }, enabled: true } }).objects.length,
    ).toBeGreaterThan(0);
    expect(renderError({ values: { worker: { replicas: 2 } } })).toMatch(/worker/);
  });
});

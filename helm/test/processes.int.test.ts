// The processes exactly as the rendered manifests run them: each container's args, environment
// (its ConfigMap and Secret resolved) and probes come from `helm template`, started through the
// image's entrypoint (tini, then `rewind`, with the Dockerfile's ENV) against Postgres and Redis
// on loopback. No Docker engine runs here: this is what can be tested without one.
import { spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import { createServer } from "node:net";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { newRunEpoch } from "@rewind/sandbox";
import { openStore } from "@rewind/store";
import { createTestDatabase } from "@rewind/store/testing";
import { REPO, byKind, find, render, requireTools, type K8sObject, type Rendered } from "./helm.js";

const TINI = "/usr/bin/tini";
const REDIS_URL = process.env.TEST_REDIS_URL ?? "redis://127.0.0.1:6379";
const SLOW_TOOLSET = path.join(REPO, "helm/test/fixtures/slow-tools.mjs");
const SCRIPT = path.join(REPO, "helm/test/fixtures/one-slow-call.ts");

/** The image's ENTRYPOINT and ENV, read from the Dockerfile (its final stage). */
function image(): { entrypoint: string[]; env: Record<string, string> } {
  const dockerfile = readFileSync(path.join(REPO, "Dockerfile"), "utf8").replace(/\\\n/g, " ");
  const final = dockerfile.slice(dockerfile.lastIndexOf("\nFROM "));
  const entrypoint = JSON.parse(/^ENTRYPOINT (\[.*\])$/m.exec(final)![1]!) as string[];
  const env: Record<string, string> = {};
  for (const line of final.match(/^ENV .*$/gm) ?? [])
    for (const [, key, value] of line.slice(4).matchAll(/(\w+)=("[^"]*"|\S+)/g))
      env[key!] = value!.replace(/^"|"$/g, "");
  return { entrypoint, env };
}

interface Container {
  name: string;
  args: string[];
  env?: {
    name: string;
    value?: string;
    valueFrom?: { secretKeyRef?: Ref; configMapKeyRef?: Ref };
  }[];
  envFrom?: { configMapRef?: { name: string }; secretRef?: { name: string } }[];
  ports?: { name: string; containerPort: number }[];
  readinessProbe?: { httpGet: { path: string; port: string } };
  livenessProbe?: { httpGet: { path: string; port: string } };
}
interface Ref {
  name: string;
  key: string;
}

class Pod {
  readonly process: ChildProcess;
  log = "";
  readonly exited: Promise<{ code: number | null; at: number }>;

  constructor(
    readonly container: Container,
    env: Record<string, string>,
  ) {
    const { entrypoint } = image();
    // The image's `rewind` is /usr/local/bin/rewind -> /app/libs/cli/bin/rewind.mjs; /app is the repo.
    const [init, ...rest] = entrypoint.map((part) =>
      part === "rewind" ? path.join(REPO, "libs/cli/bin/rewind.mjs") : part,
    );
    this.process = spawn(init!, [...rest, ...container.args], {
      cwd: REPO,
      env,
      stdio: ["ignore", "pipe", "pipe"],
    });
    const keep = (chunk: Buffer) => (this.log = (this.log + chunk.toString()).slice(-20_000));
    this.process.stdout!.on("data", keep);
    this.process.stderr!.on("data", keep);
    this.exited = new Promise((resolve) =>
      this.process.once("exit", (code) => resolve({ code, at: Date.now() })),
    );
  }

  port(name: string): number {
    const port = this.container.ports?.find((p) => p.name === name);
    if (port === undefined)
      throw new Error(`container ${this.container.name} has no port named ${name}`);
    return port.containerPort;
  }

  async probe(kind: "readinessProbe" | "livenessProbe"): Promise<number> {
    const { path: probePath, port } = this.container[kind]!.httpGet;
    const response = await fetch(`http://127.0.0.1:${this.port(port)}${probePath}`);
    return response.status;
  }
}

/** The environment a container gets: the image's ENV, then envFrom, then env (as Kubernetes). */
function environment(rendered: Rendered, container: Container): Record<string, string> {
  const configMaps = new Map(
    byKind(rendered, "ConfigMap").map((c) => [c.metadata.name, c.data ?? {}]),
  );
  const secrets = new Map(
    byKind(rendered, "Secret").map((s) => [s.metadata.name, s.stringData ?? {}]),
  );
  const lookup = (store: Map<string, Record<string, string>>, ref: Ref) => {
    const value = store.get(ref.name)?.[ref.key];
    if (value === undefined)
      throw new Error(`${container.name}: ${ref.name} has no key ${ref.key}`);
    return value;
  };
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? "",
    HOME: process.env.HOME ?? "/tmp",
    ...image().env,
    // The one change: listen on loopback only, as every test here does.
    REWIND_HOST: "127.0.0.1",
  };
  for (const source of container.envFrom ?? []) {
    if (source.configMapRef) Object.assign(env, configMaps.get(source.configMapRef.name));
    if (source.secretRef) Object.assign(env, secrets.get(source.secretRef.name));
  }
  for (const variable of container.env ?? []) {
    if (variable.value !== undefined) env[variable.name] = variable.value;
    else if (variable.valueFrom?.secretKeyRef)
      env[variable.name] = lookup(secrets, variable.valueFrom.secretKeyRef);
    else if (variable.valueFrom?.configMapKeyRef)
      env[variable.name] = lookup(configMaps, variable.valueFrom.configMapKeyRef);
  }
  env.REWIND_HOST = "127.0.0.1";
  return env;
}

const podSpec = (object: K8sObject) =>
  object.spec.template.spec as {
    containers: Container[];
    initContainers?: Container[];
    terminationGracePeriodSeconds?: number;
  };

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const server = createServer();
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

async function until<T>(
  what: string,
  check: () => Promise<T | undefined>,
  timeoutMs: number,
  log = () => "",
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check().catch(() => undefined);
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}\n${log()}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

async function runToEnd(container: Container, env: Record<string, string>) {
  const pod = new Pod(container, env);
  const { code } = await pod.exited;
  return { code, log: pod.log };
}

describe("the processes as the chart runs them", () => {
  let database: Awaited<ReturnType<typeof createTestDatabase>>;
  let rendered: Rendered;
  const prefix = `rewind-helm-${randomBytes(4).toString("hex")}`;
  const pods: Pod[] = [];
  const start = (container: Container) => {
    const pod = new Pod(container, environment(rendered, container));
    pods.push(pod);
    return pod;
  };

  beforeAll(async () => {
    requireTools();
    if (!existsSync(TINI))
      throw new Error(
        `The image's entrypoint is tini, and there is none at ${TINI}: run \`apt-get install tini\``,
      );
    database = await createTestDatabase("rewind_helm");
    rendered = render({
      values: {
        database: { url: database.url },
        redis: { url: REDIS_URL, prefix },
        api: { port: await freePort() },
        quarantine: { healthPort: await freePort() },
        projector: { healthPort: await freePort() },
        workerDefaults: {
          healthPort: await freePort(),
          toolsets: [SLOW_TOOLSET],
          shutdownGraceMs: 1_000,
          shutdownMarginSeconds: 5,
        },
        // This machine's Node serves the epoch its new runs start in (2 on Node 20).
        workers: {
          [String(newRunEpoch())]: { runtime: `node${process.versions.node.split(".")[0]}` },
        },
      },
    });
  }, 120_000);

  afterAll(async () => {
    for (const pod of pods) pod.process.kill("SIGKILL");
    await Promise.all(pods.map((pod) => pod.exited));
    const redis = new Redis(REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 1 });
    await redis.connect();
    const keys = await redis.keys(`${prefix}*`);
    if (keys.length > 0) await redis.del(...keys);
    redis.disconnect();
    await database?.drop();
  });

  it("waits for the schema, migrates idempotently, answers its probes, and drains on SIGTERM", async () => {
    const api = find(rendered, "Deployment", "rw-rewind-api");
    const quarantine = find(rendered, "Deployment", "rw-rewind-quarantine");
    const projector = find(rendered, "Deployment", "rw-rewind-projector");
    const worker = find(rendered, "Deployment", `rw-rewind-worker-epoch-${newRunEpoch()}`);
    const job = byKind(rendered, "Job")[0]!;

    // Before the migration, a service's init container waits and then gives up, saying why.
    const init = podSpec(api).initContainers![0]!;
    const impatient = { ...init, args: [...init.args.slice(0, -1), "1s"] };
    const early = await runToEnd(impatient, environment(rendered, impatient));
    expect(early.code).toBe(1);
    expect(early.log).toMatch(/schema is version 0, older than this build needs.*rewind migrate/s);

    // The migration Job, twice: the second run finds nothing to do.
    const migrate = podSpec(job).containers[0]!;
    const first = await runToEnd(migrate, environment(rendered, migrate));
    expect(first, first.log).toMatchObject({ code: 0 });
    expect(first.log).toMatch(/applied to DATABASE_URL: 0001_journal\.sql/);
    const second = await runToEnd(migrate, environment(rendered, migrate));
    expect(second, second.log).toMatchObject({ code: 0 });
    expect(second.log).toMatch(/is up to date/);

    // Every Deployment's init container now passes, and its service starts and answers.
    const services = new Map<string, Pod>();
    for (const deployment of [api, quarantine, projector, worker]) {
      const spec = podSpec(deployment);
      for (const container of spec.initContainers ?? []) {
        const result = await runToEnd(container, environment(rendered, container));
        expect(result, result.log).toMatchObject({ code: 0 });
      }
      const pod = start(spec.containers[0]!);
      services.set(deployment.metadata.name, pod);
      await until(
        `${deployment.metadata.name} to be ready`,
        async () => ((await pod.probe("readinessProbe")) === 200 ? true : undefined),
        60_000,
        () => pod.log,
      );
      expect(await pod.probe("livenessProbe")).toBe(200);
    }

    // A run whose one call is still in flight when its worker gets SIGTERM.
    const store = await openStore({ databaseUrl: database.url });
    const token = await store.createToken("default", "helm processes test");
    await store.close();
    const apiPod = services.get("rw-rewind-api")!;
    const cliEnv = {
      ...process.env,
      REWIND_URL: `http://127.0.0.1:${apiPod.port("http")}`,
      REWIND_TOKEN: token,
      REWIND_CACHE_DIR: "",
    };
    const submitted = await new Promise<string>((resolve, reject) => {
      const cli = spawn(
        process.execPath,
        [
          path.join(REPO, "libs/cli/bin/rewind.mjs"),
          "run",
          SCRIPT,
          "--toolset",
          "slow",
          "--input",
          '{"ms":4000}',
        ],
        { env: cliEnv },
      );
      let out = "";
      cli.stdout.on("data", (chunk: Buffer) => (out += chunk.toString()));
      cli.stderr.on("data", (chunk: Buffer) => (out += chunk.toString()));
      cli.once("exit", (code) =>
        code === 0 ? resolve(out.trim().split("\n").pop()!) : reject(new Error(out)),
      );
    });
    const runUrl = `${cliEnv.REWIND_URL}/v1/runs/${submitted}`;
    const headers = { authorization: `Bearer ${token}` };
    await until(
      "the call to be in flight",
      async () => {
        const run = (await (await fetch(runUrl, { headers })).json()) as { status: string };
        return run.status === "waiting" || run.status === "running" ? true : undefined;
      },
      30_000,
    );
    await new Promise((resolve) => setTimeout(resolve, 500));

    const workerPod = services.get(worker.metadata.name)!;
    const grace = podSpec(worker).terminationGracePeriodSeconds!;
    const stoppedAt = Date.now();
    workerPod.process.kill("SIGTERM"); // to tini, PID 1 of the container, as the kubelet does
    const { code, at } = await workerPod.exited;
    expect(code, workerPod.log).toBe(0);
    expect(at - stoppedAt).toBeLessThan(grace * 1000);
    expect(workerPod.log).toMatch(/handed back 1 run/);

    // Another pod of the Deployment takes the run over and finishes it.
    const replacement = start(podSpec(worker).containers[0]!);
    const result = await until(
      "the run's result",
      async () => {
        const response = await fetch(`${runUrl}/result?wait=5s`, { headers });
        const body = (await response.json()) as { status?: string; result?: unknown };
        return body.status === "completed" ? body : undefined;
      },
      60_000,
      () => replacement.log,
    );
    expect(result.result).toEqual({ waited: 4000 });

    // The API, the quarantine service and the projector stop promptly on SIGTERM too.
    for (const name of ["rw-rewind-api", "rw-rewind-quarantine", "rw-rewind-projector"]) {
      const pod = services.get(name)!;
      pod.process.kill("SIGTERM");
      const exit = await pod.exited;
      expect(exit.code, pod.log).toBe(0);
    }
  }, 240_000);
});

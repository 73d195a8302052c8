import { randomBytes } from "node:crypto";
import type { AddressInfo } from "node:net";
import { LocalRunChanges, createApi, newRunEpochFrom } from "@rewind/api";
import {
  Executor,
  SandboxProcesses,
  WakeUp,
  activationFailureLog,
  quarantineLog,
  announceWorker,
  publishToolsets,
} from "@rewind/executor";
import { startProjectorService } from "@rewind/projector";
import { QuarantineService } from "@rewind/quarantine";
import { BullMqQueue, InProcessQueue, type ActivationQueue } from "@rewind/queue";
import { epochSupport } from "@rewind/sandbox";
import type { Toolset } from "@rewind/sdk";
import { openStore, type Store } from "@rewind/store";
import { localToken } from "./local-token.js";

export interface DevPlatformOptions {
  port?: number;
  host?: string;
  /** The embedded default's folder. */
  dataDir?: string;
  /** A Postgres server instead of the embedded PGlite. */
  databaseUrl?: string;
  /** Where large values go: `s3://bucket/prefix` or a folder (default `<dataDir>/blobs`). */
  blobUrl?: string;
  /** Activations through BullMQ on this Redis instead of the in-process queue. */
  redisUrl?: string;
  /** Key prefix on that Redis (default "rewind"). */
  redisPrefix?: string;
  toolsets?: readonly Toolset[];
  /** The payload codec's keys (`id:base64key,…`); default: REWIND_CODEC_KEYS (docs/codec.md). */
  codecKeys?: string;
  /** Where its lines go; a line about a run comes with its fields (runFields). */
  log?: (line: string, fields?: object) => void;
}

export interface DevPlatform {
  url: string;
  token: string;
  store: Store;
  close(): Promise<void>;
}

const RETENTION_EVERY_MS = 60 * 60 * 1000;

/**
 * API, execution, timers and the quarantine service in one process. Crash-only: everything it
 * needs to carry on is in the store, so after a kill -9 the next start recovers every open run
 * from its journal. (Being the only executor of its database, it takes over the leases a
 * previous incarnation left behind.)
 */
export async function startDevPlatform(options: DevPlatformOptions = {}): Promise<DevPlatform> {
  const log = options.log ?? (() => {});
  // REWIND_NEW_RUN_EPOCH (services/api/src/new-run-epoch.ts): checked before anything starts.
  const newRunEpoch = newRunEpochFrom(process.env, "rewind dev");
  const dataDir = options.dataDir ?? ".rewind";
  const store = await openStore({
    dataDir,
    migrate: true,
    ...(options.databaseUrl ? { databaseUrl: options.databaseUrl } : {}),
    ...(options.blobUrl ? { blobUrl: options.blobUrl } : {}),
    ...(options.codecKeys !== undefined ? { codecKeys: options.codecKeys } : {}),
  });
  const token = await localToken(store, dataDir);
  // Scripts run in a supervised process of their own: one that aborts it (a heap bomb) costs
  // only its own run, charged to it, while this process goes on serving the API and the others.
  const sandbox = new SandboxProcesses({
    onExit: (why, runId, lost) =>
      log(
        `${why}${runId === undefined ? "" : `; run ${runId} was executing and is charged a death`}; ` +
          `${lost} run${lost === 1 ? "" : "s"} of it are loaded again in a new one`,
      ),
  });
  sandbox.warm();
  const toolsets = new Map((options.toolsets ?? []).map((t) => [t.name, t] as const));
  // Journal followers (result and journal long-polls) wake on each commit, not on a poll timer.
  const changes = new LocalRunChanges();
  // The epochs this process can replay: one whose V8 or isolated-vm it lacks is refused, saying so.
  const support = epochSupport({ maxValueBytes: sandbox.options.maxValueBytes });
  for (const { reason } of support.refused) log(`refusing ${reason}`);
  for (const warning of support.warnings) log(`warning: ${warning}`);
  if (newRunEpoch !== undefined && !support.epochs.includes(newRunEpoch))
    log(
      `warning: REWIND_NEW_RUN_EPOCH=${newRunEpoch}, which this process does not run (it runs ` +
        `${support.epochs.join(", ")}): new runs wait for a worker that does`,
    );
  const owner = `dev:${process.pid}:${randomBytes(4).toString("hex")}`;
  const executor = new Executor({
    store,
    sandbox,
    toolsets,
    epochs: support.epochs,
    onCommitted: (runId) => changes.notify(runId),
    owner,
    stealLeases: true,
    onError: activationFailureLog(log),
    onQuarantined: quarantineLog(log),
  });
  // Operators' releases and give-ups: acted on here, at once (the API pokes it) or on its poll.
  const quarantine = new QuarantineService({
    store,
    doorbell: { ring: (route) => queue.ring(route) },
    owner: `dev-quarantine:${process.pid}:${randomBytes(4).toString("hex")}`,
    onCommitted: (runId) => changes.notify(runId),
    log,
  });
  await publishToolsets(store, toolsets.values(), `dev:${process.pid}`); // for fork previews
  const presence = await announceWorker(store, owner, executor.epochs); // the epochs it runs
  const api = createApi({
    store,
    changes,
    doorbell: { ring: (route) => queue.ring(route) },
    version: "0.1.0",
    ...(newRunEpoch !== undefined ? { epoch: newRunEpoch } : {}),
    onQuarantineRequest: () => quarantine.poke(),
    // Limits set through this API hold for the next run this executor loads, not 5 s later.
    onLimitsChanged: (namespace) => executor.forgetLimits(namespace),
  });
  await api.listen({ port: options.port ?? 7420, host: options.host ?? "127.0.0.1" });
  const address = api.server.address() as AddressInfo;
  const url = `http://${address.address === "::1" ? "localhost" : address.address}:${address.port}`;

  // The doorbell: BullMQ when REDIS_URL is set, else in this process. Either way the executor
  // takes the activations; calls' outcomes and timers of hot runs never go through the queue.
  const queue: ActivationQueue = options.redisUrl
    ? await BullMqQueue.connect({
        redisUrl: options.redisUrl,
        ...(options.redisPrefix ? { prefix: options.redisPrefix } : {}),
      })
    : new InProcessQueue();
  queue.consume((runId, first) => executor.activate(runId, false, first ? { first } : {}), {
    epochs: executor.epochs,
  });
  quarantine.start();
  // The projector, embedded: webhooks always (its sink writes delivery rows, it always
  // delivers), traces when an OTLP endpoint is configured (a sink that can never deliver would
  // hold its cursor, and retention waits for every sink's).
  const env = process.env;
  const traces = Boolean(
    (env.OTEL_EXPORTER_OTLP_ENDPOINT || env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) &&
    env.OTEL_TRACES_EXPORTER !== "none",
  );
  const projector =
    traces || env.REWIND_WEBHOOKS !== "off"
      ? // A payload's link leads here unless the operator says where clients reach it.
        await startProjectorService({ store, env: { REWIND_PUBLIC_URL: url, ...env }, log, traces })
      : undefined;
  const wake = new WakeUp(store, (route) => queue.ring(route));
  const recovered = await wake.recover();
  if (recovered > 0)
    log(`resumed ${recovered} open run${recovered === 1 ? "" : "s"} from their journals`);
  wake.start();
  const retention = setInterval(
    () => void store.deleteExpired(new Date()).catch(() => {}),
    RETENTION_EVERY_MS,
  );
  retention.unref();

  return {
    url,
    token,
    store,
    async close() {
      clearInterval(retention);
      wake.stop();
      await presence.stop();
      await quarantine.stop();
      await projector?.close();
      await queue.close();
      await api.close();
      await executor.close();
      sandbox.dispose();
      await store.close();
    },
  };
}

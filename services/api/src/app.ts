import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from "fastify";
import secureJson from "secure-json-parse";
import { RewindError, limitDefaults, type Limits } from "@rewind/core";
import { DASHBOARD_PATH, mountDashboard } from "@rewind/dashboard";
import { newRunEpoch } from "@rewind/sandbox";
import { ReplayProcess, type ReplayChecks } from "@rewind/executor";
import type { Store } from "@rewind/store";
import type { ApiContext, ApiLog } from "./context.js";
import type { Doorbell } from "./doorbell.js";
import { invalidInput, notFound, toHttpError } from "./errors.js";
import { clientErrorHandler, registerMethodNotAllowed } from "./http-errors.js";
import { forbiddenKey } from "./forbidden-keys.js";
import { DEFAULT_MAX_VALUE_BYTES } from "./submission.js";
import { openApiRoute } from "./openapi.js";
import { registerRoute, type Route } from "./route.js";
import { POLL_ONLY, type RunChanges } from "./run-changes.js";
import { healthz, readyz, root } from "./routes/health.js";
import { readJournal } from "./routes/journal.js";
import { getResult } from "./routes/result.js";
import { createRun, getRun, listRuns } from "./routes/runs.js";
import { forkRun } from "./routes/fork.js";
import { replayRun, replayRuns } from "./routes/replay.js";
import { registerMetrics, scrapeMetrics } from "./routes/metrics.js";
import { createLogger } from "@rewind/telemetry";
import { listEpochs, migrateEpoch, showEpochCheck } from "./routes/epochs.js";
import { giveUpRun, listQuarantine, releaseRun, showQuarantine } from "./routes/quarantine.js";
import { getRunScript } from "./routes/script.js";
import { compileSubmittedScript } from "./routes/compile.js";
import { getOwnToken } from "./routes/token-self.js";
import { getRunValue } from "./routes/values.js";
import { cancelRun, sendSignal } from "./routes/signals.js";
import { createToken, listTokens, revokeToken } from "./routes/tokens.js";
import { getLimitsRoute, setLimitsRoute } from "./routes/limits.js";
import { getCodecRoute, setCodecRoute } from "./routes/codec.js";
import { getCapturePolicyRoute, setCapturePolicyRoute } from "./routes/capture-policy.js";
import { WEBHOOK_ROUTES } from "./routes/webhooks.js";
import { Shutdown } from "./shutdown.js";
import { addressPolicy } from "@rewind/core/outbound-address";

export interface ApiOptions {
  store: Store;
  doorbell: Doorbell;
  /** The build's version, shown at `/` and in the OpenAPI document. */
  version: string;
  /**
   * Change notices for long-polls (result, journal with `wait`). Without them the API reads the
   * store every `pollMs`; with them it reads on each notice and every `pollMs` as a backstop.
   */
  changes?: RunChanges;
  /** Default: 100 ms, or 1 s when `changes` is given. */
  pollMs?: number;
  /** The determinism epoch new runs are created on (default: the newest this runtime serves). */
  epoch?: number;
  /**
   * The largest value a run can take (an input, a signal's payload), in bytes of JSON: the
   * sandbox's `maxValueBytes` (default 4 MiB). Larger ones are refused with 413 at submission.
   */
  maxValueBytes?: number;
  /**
   * Defaults of the namespace limits the API enforces (runs in flight, starts per second), for
   * namespaces that set none of their own (default: REWIND_LIMIT_* or the built-in values).
   */
  limits?: Partial<Limits>;
  /** The largest request body, in bytes (default 8 MiB). */
  bodyLimit?: number;
  /** Where unexpected errors are reported (default: one line on stderr). */
  log?: ApiLog;
  /**
   * Called after an operator's release or give-up request is stored: a quarantine service in the
   * same process looks at once (across processes it polls).
   */
  onQuarantineRequest?: (runId: string) => void;
  /** Called after a namespace's limits are set: an executor in the same process reads them anew. */
  onLimitsChanged?: (namespace: string) => void;
  /**
   * Where replay checks and fork previews run (default: a child process with a pool of worker
   * threads, one per core, started on first use and closed with the API: a script that aborts
   * the process it runs in never takes the API down).
   */
  replays?: ReplayChecks;
  /**
   * Whether to serve the operators' dashboard at `/dashboard/` (default true): its static files
   * only, without a token; the page then calls the API with the operator's token.
   */
  dashboard?: boolean;
  /**
   * Private, loopback or link-local CIDRs, addresses and host names webhook endpoints may use
   * (default: REWIND_WEBHOOK_ALLOW; the projector's dispatcher reads the same variable).
   */
  webhookAllow?: string;
}

export const DEFAULT_BODY_LIMIT = 8 * 1024 * 1024;
/** Node's own limit on a request's URL and headers together (its --max-http-header-size). */
const MAX_HEADER_BYTES = 16 * 1024;

const ROUTES: readonly Route[] = [
  root,
  healthz,
  readyz,
  createRun,
  listRuns,
  getRun,
  readJournal,
  getResult,
  sendSignal,
  cancelRun,
  getRunScript,
  getRunValue,
  forkRun,
  listQuarantine,
  showQuarantine,
  releaseRun,
  giveUpRun,
  listEpochs,
  migrateEpoch,
  showEpochCheck,
  replayRun,
  replayRuns,
  compileSubmittedScript,
  getOwnToken,
  listTokens,
  createToken,
  revokeToken,
  scrapeMetrics,
  getLimitsRoute,
  setLimitsRoute,
  getCodecRoute,
  setCodecRoute,
  getCapturePolicyRoute,
  setCapturePolicyRoute,
  ...WEBHOOK_ROUTES,
];

/**
 * The HTTP API as a fastify instance (not listening yet: call `listen`, or `inject` in tests).
 * It validates, stores scripts and runs, writes outside events to the inbox and rings the
 * doorbell; it never executes a script and never appends to a journal.
 */
export function createApi(options: ApiOptions): FastifyInstance {
  const shutdown = new Shutdown();
  const replays = options.replays ?? new ReplayProcess();
  const ctx: ApiContext = {
    store: options.store,
    doorbell: options.doorbell,
    replays,
    changes: options.changes ?? POLL_ONLY,
    version: options.version,
    epoch: options.epoch ?? newRunEpoch(),
    maxValueBytes: options.maxValueBytes ?? DEFAULT_MAX_VALUE_BYTES,
    limits: { ...limitDefaults(), ...options.limits },
    pollMs: options.pollMs ?? (options.changes === undefined ? 100 : 1_000),
    shutdown,
    log: options.log ?? stderrLog,
    webhookAddresses: addressPolicy(options.webhookAllow ?? process.env.REWIND_WEBHOOK_ALLOW),
    ...(options.onQuarantineRequest ? { onQuarantineRequest: options.onQuarantineRequest } : {}),
    ...(options.onLimitsChanged ? { onLimitsChanged: options.onLimitsChanged } : {}),
    ...(options.dashboard !== false ? { dashboard: DASHBOARD_PATH } : {}),
  };
  const bodyLimit = options.bodyLimit ?? DEFAULT_BODY_LIMIT;
  const answerError = (error: unknown, request: FastifyRequest, reply: FastifyReply) => {
    const { status, body, expected } = toHttpError(error, { bodyLimit });
    if (!expected) ctx.log.error(`${request.method} ${request.url} failed`, error);
    if (body.error.code === "UNAUTHORIZED")
      void reply.header("WWW-Authenticate", 'Bearer realm="rewind"');
    // A database restarting or an API shutting down: clients and proxies may retry shortly.
    if (status === 503) void reply.header("Retry-After", "2");
    // A namespace over its starts per second may start again in a second.
    if (status === 429) void reply.header("Retry-After", "1");
    return reply.code(status).type("application/json; charset=utf-8").send(body);
  };
  const app = Fastify({
    logger: false,
    bodyLimit,
    http: { maxHeaderSize: MAX_HEADER_BYTES },
    // Requests the HTTP parser or the router refuse are answered in the API's error shape too.
    clientErrorHandler: clientErrorHandler(MAX_HEADER_BYTES),
    frameworkErrors: (error, request, reply) => void answerError(error, request, reply),
    // Signal names may be up to 200 characters (the router's default stops at 100).
    routerOptions: { maxParamLength: 256 },
    // While closing, requests are refused by the hook below, in the API's own error shape.
    return503OnClosing: false,
  });

  // JSON is the only body the API reads. An empty body is "no body" (a signal without payload);
  // `__proto__` keys are refused rather than silently dropped from what would be journaled.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser("application/json", { parseAs: "string" }, (_request, text, done) => {
    if ((text as string).trim() === "") return done(null, undefined);
    try {
      done(
        null,
        secureJson.parse(text, undefined, { protoAction: "error", constructorAction: "error" }),
      );
    } catch (error) {
      const forbidden = forbiddenKey(text as string);
      if (forbidden !== undefined) {
        return done(
          invalidInput(
            forbidden,
            `is a key the API refuses (it would change an object's prototype in JavaScript code that reads the value): rename the key`,
          ),
          undefined,
        );
      }
      done(
        invalidInput(
          "body",
          `is not valid JSON (${(error as Error).message}): send one JSON document with Content-Type: application/json`,
        ),
        undefined,
      );
    }
  });

  app.setErrorHandler(answerError);
  app.setNotFoundHandler((request) => {
    throw notFound(
      `No route ${request.method} ${request.url.split("?")[0]}: the API's routes are listed in /v1/openapi.json`,
    );
  });
  // Long-polls answer at once when the API closes, rather than holding the close for a minute;
  // requests that still arrive are sent elsewhere (a load balancer retries a 503).
  app.addHook("preClose", async () => shutdown.abort());
  if (options.replays === undefined) app.addHook("onClose", async () => replays.close());
  app.addHook("onRequest", async (_request, reply) => {
    if (!shutdown.aborted) return;
    void reply.header("Connection", "close");
    throw new RewindError("UNAVAILABLE", "The API is shutting down: retry the request");
  });

  const routes: Route[] = [...ROUTES, openApiRoute(() => routes, options.version)];
  for (const route of routes) registerRoute(app, route, ctx);
  registerMetrics(app);
  registerMethodNotAllowed(app, routes);
  if (ctx.dashboard !== undefined) mountDashboard(app);
  return app;
}

/** The API's own errors, structured (the error with its stack under err). */
const logger = createLogger("api");
const stderrLog: ApiLog = {
  error(message, error) {
    logger.error({ err: error }, message);
  },
};

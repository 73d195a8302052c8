import type {
  CompileScript,
  CompiledScriptView,
  TokenSelf,
  CreateToken,
  CreatedRun,
  CreatedToken,
  EpochCheckView,
  LimitsView,
  CodecView,
  SetCodec,
  CapturePolicyView,
  PutCapturePolicy,
  MigrateEpoch,
  SetLimits,
  TokenList,
  TokenView,
  EpochList,
  ForkDryRun,
  ForkRequest,
  ForkedRun,
  InboxAccepted,
  ListRunsFilter,
  QuarantineAction,
  QuarantineDetail,
  QuarantineList,
  ReplayBatch,
  ReplayCheck,
  RunList,
  RunResult,
  RepeatedRun,
  WaitedRun,
  RunScript,
  RunValue,
  RunView,
  ScriptSource,
  StartRun,
  CreateWebhook,
  CreatedWebhookEndpoint,
  RotateWebhook,
  WebhookDeliveriesQuery,
  WebhookDeliveryDetail,
  WebhookDeliveryList,
  WebhookDeliveryView,
  WebhookEndpointList,
  WebhookEndpointView,
} from "@rewind/contract";
import type { Json, JournalEntry, RunStatus } from "@rewind/core";
import { followJournal, type FollowOptions } from "./journal-stream.js";

/** Whether a script matches a run's journal; if not, the first divergence (seq, both sides). */
export type ReplayResult = ReplayCheck;

/** A fork request: with `dryRun: true` it answers only the preview, otherwise the fork made. */
export interface ForkCall {
  (id: string, fork: ForkRequest & { dryRun: true }): Promise<ForkDryRun>;
  (id: string, fork: ForkRequest & { dryRun?: false }): Promise<ForkedRun>;
  (id: string, fork: ForkRequest): Promise<ForkedRun | ForkDryRun>;
}

/**
 * GET /v1/runs's filter as code writes it: the wire's (ListRunsFilter), with several statuses as
 * a list, times as Dates, and flags as booleans.
 */
export type RunListFilter = Omit<
  ListRunsFilter,
  "status" | "epoch" | "createdFrom" | "createdTo" | "fork" | "counts"
> & {
  status?: RunStatus | readonly RunStatus[];
  epoch?: number;
  createdFrom?: Date | string;
  createdTo?: Date | string;
  /** true: only forks; false: no forks. */
  fork?: boolean;
  /** Also answer the counts by status over all pages. */
  counts?: boolean;
};

/** An error answered by the API: its code from Rewind's error table, and what to do. */
export class RewindApiError extends Error {
  override readonly name = "RewindApiError";
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly field?: string,
  ) {
    super(message);
  }
}

export interface RewindOptions {
  url?: string;
  token?: string;
  fetch?: typeof fetch;
}

/** The client of Rewind's HTTP API. */
export class Rewind {
  readonly url: string;
  private readonly token: string | undefined;
  private readonly fetcher: typeof fetch;

  constructor(options: RewindOptions = {}) {
    this.url = (options.url ?? process.env.REWIND_URL ?? "http://localhost:7420").replace(
      /\/$/,
      "",
    );
    this.token = options.token ?? process.env.REWIND_TOKEN;
    this.fetcher = options.fetch ?? fetch;
  }

  readonly runs = {
    /**
     * Starts a run. With `idempotencyKey` (sent as the Idempotency-Key header) the start is safe
     * to retry: the same key and request answer the run the first start made (`created: false`),
     * the same key with another request fails with 409 CONFLICT.
     */
    start: async (run: StartRun, options: { idempotencyKey?: string } = {}) => {
      // 201: a new run (queued); 200: the run an earlier start with this key made, as it is now.
      return this.startRun<CreatedRun | RepeatedRun>(run, options.idempotencyKey);
    },
    /**
     * Starts a run and waits up to `wait` ("30s" by default, at most "60s") for it to end, in one
     * request: `ended` says whether it did, with its `result` or `error`; if not, wait on with
     * `result(id)`. The run is started whether or not it ends in time. `idempotencyKey` as for
     * `start`: a retry with the same key waits for the run the first attempt started.
     */
    execute: async (run: StartRun, options: { wait?: string; idempotencyKey?: string } = {}) =>
      this.startRun<WaitedRun>(run, options.idempotencyKey, options.wait ?? "30s"),
    get: (id: string) => this.request<RunView>("GET", `/v1/runs/${encodeURIComponent(id)}`),
    /** A page of runs; every filter given narrows it (see GET /v1/runs). */
    list: (filter: RunListFilter = {}) =>
      this.request<RunList>("GET", `/v1/runs${query(listQuery(filter))}`),
    /** Entries after `after`; with `wait` ("30s"), waits for new entries or the run's end. */
    journal: (id: string, after = 0, wait?: string, limit?: number) =>
      // The wire types an entry loosely; @rewind/core's JournalEntry is the journal's own type.
      this.request<{ entries: JournalEntry[]; status: RunStatus }>(
        "GET",
        `/v1/runs/${encodeURIComponent(id)}/journal${query({ after, wait, limit })}`,
      ),
    /**
     * The run's journal as it grows: each entry once, in seq order, as soon as it commits (a
     * Server-Sent Events stream, opened again after a broken connection from the last seq seen).
     * The iterator ends when the run has ended; `onStatus` hears each status change meanwhile.
     *
     * ```ts
     * for await (const entry of rewind.runs.follow(id)) if (entry.kind === "output") log(entry.text);
     * ```
     */
    follow: (id: string, options: FollowOptions = {}) =>
      followJournal(async (headers, signal) => {
        const response = await this.send("GET", `/v1/runs/${encodeURIComponent(id)}/journal`, {
          headers,
          ...(signal !== undefined ? { signal } : {}),
        });
        if (!response.ok) throw await apiError(response, "GET", `/v1/runs/${id}/journal`);
        return response;
      }, options),
    /** Waits up to `wait` (e.g. "30s") for the run to end; answers with its status either way. */
    result: (id: string, wait = "30s") =>
      this.request<RunResult>("GET", `/v1/runs/${encodeURIComponent(id)}/result${query({ wait })}`),
    signal: (id: string, name: string, payload: Json = null) =>
      this.request<InboxAccepted>(
        "POST",
        `/v1/runs/${encodeURIComponent(id)}/signals/${encodeURIComponent(name)}`,
        payload,
      ),
    /** One of the run's values by its reference (a journal page's `deferred` names them). */
    value: (id: string, ref: string) =>
      this.request<RunValue>(
        "GET",
        `/v1/runs/${encodeURIComponent(id)}/values/${encodeURIComponent(ref)}`,
      ),
    /** The compiled script the run executes, with its source map. */
    script: (id: string) =>
      this.request<RunScript>("GET", `/v1/runs/${encodeURIComponent(id)}/script`),
    /** Forks the run with a corrected script: recorded calls are reused while the calls match. */
    fork: ((id: string, fork: ForkRequest) =>
      this.request<ForkedRun | ForkDryRun>(
        "POST",
        `/v1/runs/${encodeURIComponent(id)}/fork`,
        fork,
      )) as ForkCall,
    /** Checks the run's script (or a corrected one) against its journal; nothing is called. */
    replay: (id: string, script?: ScriptSource) =>
      this.request<ReplayResult>(
        "POST",
        `/v1/runs/${encodeURIComponent(id)}/replay`,
        script === undefined ? {} : { script },
      ),
    /**
     * The same check over many runs in one request (at most 200 ids): a script (or each run's
     * own) against each run's journal. One row per id, in order; a missing run has `error`.
     */
    replayMany: (ids: readonly string[], script?: ScriptSource) =>
      this.request<ReplayBatch>(
        "POST",
        "/v1/replay",
        script === undefined ? { runs: ids } : { runs: ids, script },
      ),
    cancel: (id: string) =>
      this.request<InboxAccepted>("POST", `/v1/runs/${encodeURIComponent(id)}/cancel`, {}),
  };

  /** Scripts sent as text: compiled by the server, which reads no file of its own for them. */
  readonly scripts = {
    /** Compiles `{ entry, files }` (imports only among the files and "rewind"): pass the answer as a run's script. */
    compile: (source: CompileScript) =>
      this.request<CompiledScriptView>("POST", "/v1/scripts/compile", source),
  };

  /** The token this client sends: its namespace, label and scopes. */
  whoami(): Promise<TokenSelf> {
    return this.request("GET", "/v1/token");
  }

  /** Operators' side of quarantine: runs whose replay diverged, held until released or given up. */
  readonly quarantine = {
    list: (page: { limit?: number; before?: string } = {}) =>
      this.request<QuarantineList>("GET", `/v1/quarantine${query(page)}`),
    get: (id: string) =>
      this.request<QuarantineDetail>("GET", `/v1/quarantine/${encodeURIComponent(id)}`),
    /** Replays the run on its own epoch, or `epoch`; waits up to `wait` ("5s") for it to happen. */
    release: (id: string, options: { epoch?: number; wait?: string } = {}) =>
      this.request<QuarantineAction>(
        "POST",
        `/v1/quarantine/${encodeURIComponent(id)}/release${query({ wait: options.wait })}`,
        options.epoch === undefined ? {} : { epoch: options.epoch },
      ),
    /** Fails the run (code GIVEN_UP) with the reason; waits up to `wait` for it to happen. */
    giveUp: (id: string, options: { reason?: string; wait?: string } = {}) =>
      this.request<QuarantineAction>(
        "POST",
        `/v1/quarantine/${encodeURIComponent(id)}/give-up${query({ wait: options.wait })}`,
        options.reason === undefined ? {} : { reason: options.reason },
      ),
  };

  /** The determinism epochs the server's build supports, with the live runs on each. */
  epochs(): Promise<EpochList> {
    return this.request("GET", "/v1/epochs");
  }

  /**
   * Asks a worker of epoch `to` to replay the open runs of epoch `from` and move those that match
   * (none with dryRun); poll `epochCheck` for the verdicts.
   */
  migrateEpoch(from: number, options: MigrateEpoch): Promise<EpochCheckView> {
    return this.request("POST", `/v1/epochs/${from}/migrate`, options);
  }

  epochCheck(id: number): Promise<EpochCheckView> {
    return this.request("GET", `/v1/epochs/checks/${id}`);
  }

  /** The namespace's API tokens (needs the `operate` scope): never a token's plaintext but once. */
  readonly tokens = {
    list: () => this.request<TokenList>("GET", "/v1/tokens"),
    /** A new token, shown in the answer only; default scopes read, run, operate. */
    create: (options: CreateToken) => this.request<CreatedToken>("POST", "/v1/tokens", options),
    revoke: (id: string) =>
      this.request<TokenView>("POST", `/v1/tokens/${encodeURIComponent(id)}/revoke`, {}),
  };

  /** The namespace's limits: those in force, its own settings (null: default), the defaults. */
  readonly limits = {
    get: () => this.request<LimitsView>("GET", "/v1/limits"),
    /** Sets some (null: back to the default; needs `operate`); the others are kept. */
    set: (changes: SetLimits) => this.request<LimitsView>("POST", "/v1/limits", changes),
  };

  /** The namespace's payload codec (values sealed at rest): whether it is on, and the key ids. */
  readonly codec = {
    get: () => this.request<CodecView>("GET", "/v1/codec"),
    /** Switches it on or off for new values (needs `operate`). */
    set: (setting: SetCodec) => this.request<CodecView>("POST", "/v1/codec", setting),
  };

  /**
   * The namespace's capture policy (docs/capture-policy.md): fields and patterns redacted before
   * the journal. `get` needs `read`; `set` replaces the policy (needs `operate`), new entries only.
   */
  readonly capturePolicy = {
    get: (options: { toolset?: string } = {}) =>
      this.request<CapturePolicyView>(
        "GET",
        `/v1/capture-policy${options.toolset === undefined ? "" : `?toolset=${encodeURIComponent(options.toolset)}`}`,
      ),
    set: (policy: PutCapturePolicy) =>
      this.request<CapturePolicyView>("PUT", "/v1/capture-policy", policy),
  };

  /**
   * The namespace's webhook endpoints (docs/webhooks.md): managing them needs `operate`, listing
   * them and their deliveries `read`. A secret is shown on create, rotate and `secret` only.
   */
  readonly webhooks = {
    create: (options: CreateWebhook) =>
      this.request<CreatedWebhookEndpoint>("POST", "/v1/webhooks", options),
    list: () => this.request<WebhookEndpointList>("GET", "/v1/webhooks"),
    get: (id: string) =>
      this.request<WebhookEndpointView>("GET", `/v1/webhooks/${encodeURIComponent(id)}`),
    secret: (id: string) =>
      this.request<{ secret: string }>("GET", `/v1/webhooks/${encodeURIComponent(id)}/secret`),
    remove: (id: string) =>
      this.request<WebhookEndpointView>("DELETE", `/v1/webhooks/${encodeURIComponent(id)}`),
    /** A new secret; the old one keeps signing for `keepPrevious` (default "24h"). */
    rotate: (id: string, options: RotateWebhook = {}) =>
      this.request<CreatedWebhookEndpoint>(
        "POST",
        `/v1/webhooks/${encodeURIComponent(id)}/rotate`,
        options,
      ),
    enable: (id: string) =>
      this.request<WebhookEndpointView>(
        "POST",
        `/v1/webhooks/${encodeURIComponent(id)}/enable`,
        {},
      ),
    disable: (id: string) =>
      this.request<WebhookEndpointView>(
        "POST",
        `/v1/webhooks/${encodeURIComponent(id)}/disable`,
        {},
      ),
    deliveries: (id: string, page: WebhookDeliveriesQuery = {}) =>
      this.request<WebhookDeliveryList>(
        "GET",
        `/v1/webhooks/${encodeURIComponent(id)}/deliveries${query(page as Record<string, string | number | undefined>)}`,
      ),
    delivery: (id: string, delivery: string) =>
      this.request<WebhookDeliveryDetail>(
        "GET",
        `/v1/webhooks/${encodeURIComponent(id)}/deliveries/${encodeURIComponent(delivery)}`,
      ),
    redeliver: (id: string, delivery: string) =>
      this.request<WebhookDeliveryView>(
        "POST",
        `/v1/webhooks/${encodeURIComponent(id)}/deliveries/${encodeURIComponent(delivery)}/redeliver`,
        {},
      ),
  };

  /** POST /v1/runs, with `wait` a start that answers when the run ends (or the wait passes). */
  private async startRun<T extends CreatedRun | RepeatedRun | WaitedRun>(
    run: StartRun,
    key: string | undefined,
    wait?: string,
  ): Promise<T & { created: boolean }> {
    const response = await this.send("POST", `/v1/runs${query({ wait })}`, {
      body: run,
      ...(key !== undefined ? { headers: { "idempotency-key": key } } : {}),
    });
    if (!response.ok) throw await apiError(response, "POST", "/v1/runs");
    const created = JSON.parse(await response.text()) as T;
    return { ...created, created: response.status !== 200 };
  }

  private async request<T>(method: string, path: string, body?: unknown): Promise<T> {
    const response = await this.send(method, path, body === undefined ? {} : { body });
    if (!response.ok) throw await apiError(response, method, path);
    const text = await response.text();
    return (text === "" ? undefined : JSON.parse(text)) as T;
  }

  private async send(
    method: string,
    path: string,
    options: { body?: unknown; headers?: Record<string, string>; signal?: AbortSignal },
  ): Promise<Response> {
    const headers: Record<string, string> = { ...options.headers };
    if (this.token !== undefined) headers.authorization = `Bearer ${this.token}`;
    if (options.body !== undefined) headers["content-type"] = "application/json";
    try {
      return await this.fetcher(this.url + path, {
        method,
        headers,
        body: options.body === undefined ? null : JSON.stringify(options.body),
        ...(options.signal !== undefined ? { signal: options.signal } : {}),
      });
    } catch (error) {
      if (options.signal?.aborted) throw error;
      throw new RewindApiError(
        0,
        "UNAVAILABLE",
        `Could not reach Rewind at ${this.url} (${(error as Error).message}): is \`rewind dev\` running, and is REWIND_URL right?`,
      );
    }
  }
}

/** The API's error body as a RewindApiError (its code, message and field). */
async function apiError(response: Response, method: string, path: string) {
  const text = await response.text();
  let data: { error?: { code?: string; message?: string; field?: string } } | undefined;
  try {
    data = text === "" ? undefined : (JSON.parse(text) as typeof data);
  } catch {
    data = undefined; // not the API's JSON (a proxy's page): the status says enough
  }
  return new RewindApiError(
    response.status,
    data?.error?.code ?? "UNAVAILABLE",
    data?.error?.message ?? `${method} ${path} answered ${response.status}`,
    data?.error?.field,
  );
}

function query(params: Record<string, string | number | undefined>): string {
  const entries = Object.entries(params).filter(([, v]) => v !== undefined) as [
    string,
    string | number,
  ][];
  return entries.length === 0
    ? ""
    : `?${new URLSearchParams(entries.map(([k, v]): [string, string] => [k, String(v)])).toString()}`;
}

function listQuery(filter: RunListFilter): Record<string, string | number | undefined> {
  const instant = (at: Date | string | undefined) => (at instanceof Date ? at.toISOString() : at);
  const flag = (value: boolean | undefined) => (value === undefined ? undefined : String(value));
  return {
    ...filter,
    status: typeof filter.status === "string" ? filter.status : filter.status?.join(","),
    createdFrom: instant(filter.createdFrom),
    createdTo: instant(filter.createdTo),
    fork: flag(filter.fork),
    counts: flag(filter.counts),
  };
}

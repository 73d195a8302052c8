/**
 * The API as the dashboard uses it: same origin, the operator's bearer token in a header (never in
 * a URL), and the API's own error message passed on as it is. The shapes are @rewind/sdk's: one
 * source for the API's types, never a copy here.
 */
import type {
  CompileProblem,
  CompileScript,
  CompiledScriptView,
  DeferredValue,
  EpochView,
  ForkPreview,
  JournalEntry,
  Json,
  QuarantineActionResult,
  QuarantineDetail,
  QuarantineSummary,
  ReplayResult,
  RunList,
  RunStatus,
  RunView,
  TokenSelf,
} from "@rewind/sdk";

export type {
  CompileProblem,
  CompileScript,
  CompiledScriptView,
  ReplayDivergence,
  TokenSelf,
  DeferredValue,
  EntryLabel,
  EpochView,
  ErrorData,
  ExploreFile,
  ForkPreview,
  JournalEntry,
  Json,
  QuarantineDetail,
  QuarantineSummary,
  ReplayResult,
  RunList,
  RunStatus,
  RunView,
} from "@rewind/sdk";
export type QuarantineAction = QuarantineActionResult;

/** A page of a run's journal, its large values deferred (by `seq.field`). */
export interface JournalPage {
  entries: JournalEntry[];
  status: RunStatus;
  deferred?: Record<string, DeferredValue>;
}

export interface EpochList {
  current: number;
  epochs: EpochView[];
}

export interface QuarantineList {
  runs: QuarantineSummary[];
  next?: string;
}

/** A run's compiled script with its source map (whose sourcesContent holds the sources). */
export interface RunScript {
  hash: string;
  entry: string;
  code: string;
  sourceMap: string;
}

export interface ForkAnswer {
  dryRun?: boolean;
  preview: ForkPreview;
  id?: string;
}

/** A script to fork or check with: one stored before (by hash), or compiled just now. */
export type ScriptChoice = { hash: string } | CompiledScriptView;

/** An answer other than 2xx, with the API's message (or what went wrong on the way). */
export class ApiError extends Error {
  constructor(
    message: string,
    readonly status: number,
    readonly code: string,
    /** With COMPILE_ERROR: where, file by file. */
    readonly problems: CompileProblem[] = [],
  ) {
    super(message);
  }
}

const id = encodeURIComponent;

export class Api {
  constructor(private readonly token: string) {}

  epochs(): Promise<EpochList> {
    return this.request("GET", "/v1/epochs");
  }

  /** A page of runs: `query` is the list's query string as the Runs page keeps it. */
  runs(query: URLSearchParams): Promise<RunList> {
    return this.request("GET", `/v1/runs?${query.toString()}`);
  }

  run(runId: string): Promise<RunView> {
    return this.request("GET", `/v1/runs/${id(runId)}`);
  }

  /**
   * The entries after `after` (at most `limit`, a page, when given), each value kept in the blob
   * store left out (null in its entry, named in `deferred`): read one with `value` when opened.
   */
  journal(runId: string, after = 0, limit?: number): Promise<JournalPage> {
    const page = limit === undefined ? "" : `&limit=${limit}`;
    return this.request(
      "GET",
      `/v1/runs/${id(runId)}/journal?after=${after}${page}&values=deferred`,
    );
  }

  /** One of the run's values, by the ref a journal page deferred it under. */
  async value(runId: string, ref: string): Promise<Json> {
    const answer = await this.request<{ value: Json }>(
      "GET",
      `/v1/runs/${id(runId)}/values/${id(ref)}`,
    );
    return answer.value;
  }

  script(runId: string): Promise<RunScript> {
    return this.request("GET", `/v1/runs/${id(runId)}/script`);
  }

  signal(runId: string, name: string, payload: unknown): Promise<unknown> {
    return this.request("POST", `/v1/runs/${id(runId)}/signals/${id(name)}`, payload ?? null);
  }

  cancel(runId: string, reason: string | undefined): Promise<unknown> {
    return this.request("POST", `/v1/runs/${id(runId)}/cancel`, reason ? { reason } : {});
  }

  /** What this tab's token may do (its scopes), to offer only that. */
  whoami(): Promise<TokenSelf> {
    return this.request("GET", "/v1/token");
  }

  /** Compiles pasted or uploaded files on the server (which reads none of its own for them). */
  compile(source: CompileScript): Promise<CompiledScriptView> {
    return this.request("POST", "/v1/scripts/compile", source);
  }

  /** Forks with a script: a preview only when `dryRun`; `at`: live from this seq at the latest. */
  fork(runId: string, script: ScriptChoice, dryRun: boolean, at?: number): Promise<ForkAnswer> {
    return this.request("POST", `/v1/runs/${id(runId)}/fork`, {
      script: "code" in script ? withoutHash(script) : { hash: script.hash },
      dryRun,
      ...(at === undefined ? {} : { at }),
    });
  }

  /** The replay check of the run's own script, or of `script`. */
  replay(runId: string, script?: ScriptChoice): Promise<ReplayResult> {
    const body =
      script === undefined
        ? {}
        : { script: "code" in script ? withoutHash(script) : { hash: script.hash } };
    return this.request("POST", `/v1/runs/${id(runId)}/replay`, body);
  }

  quarantine(): Promise<QuarantineList> {
    return this.request("GET", "/v1/quarantine?limit=100");
  }

  quarantined(runId: string): Promise<QuarantineDetail> {
    return this.request("GET", `/v1/quarantine/${id(runId)}`);
  }

  release(runId: string, epoch: number | undefined): Promise<QuarantineAction> {
    const body = epoch === undefined ? {} : { epoch };
    return this.request("POST", `/v1/quarantine/${id(runId)}/release`, body);
  }

  giveUp(runId: string, reason: string | undefined): Promise<QuarantineAction> {
    const body = reason === undefined ? {} : { reason };
    return this.request("POST", `/v1/quarantine/${id(runId)}/give-up`, body);
  }

  private async request<T>(method: "GET" | "POST", path: string, body?: unknown): Promise<T> {
    const headers: Record<string, string> = { authorization: `Bearer ${this.token}` };
    if (body !== undefined) headers["content-type"] = "application/json";
    let response: Response;
    try {
      response = await fetch(path, {
        method,
        headers,
        cache: "no-store",
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
    } catch (error) {
      throw new ApiError(
        `The API at ${location.origin} does not answer (${(error as Error).message}): is rewind running?`,
        0,
        "UNREACHABLE",
      );
    }
    const text = await response.text();
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      throw new ApiError(
        `${method} ${path} answered ${response.status} with something other than JSON: ${text.slice(0, 200)}`,
        response.status,
        "NOT_JSON",
      );
    }
    if (!response.ok) {
      const error = (json as { error?: { code?: unknown; message?: unknown } }).error;
      const code = typeof error?.code === "string" ? error.code : `HTTP_${response.status}`;
      const message = typeof error?.message === "string" ? error.message : text.slice(0, 200);
      const problems = (error as { problems?: unknown } | undefined)?.problems;
      throw new ApiError(
        `${message} (${code})`,
        response.status,
        code,
        Array.isArray(problems) ? (problems as CompileProblem[]) : [],
      );
    }
    return json as T;
  }
}

/** A compiled script as a request sends it: the API computes the hash itself. */
function withoutHash(script: CompiledScriptView) {
  return { entry: script.entry, code: script.code, sourceMap: script.sourceMap };
}

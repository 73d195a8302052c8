/**
 * The API as the dashboard uses it: same origin, the operator's bearer token in a header (never in
 * a URL), and the API's own error message passed on as it is.
 */

// The shapes below are the parts of the API's responses the page reads (see /v1/openapi.json).
export interface EpochView {
  epoch: number;
  known: boolean;
  supported: boolean;
  current: boolean;
  released?: string;
  environment?: { v8: string; isolatedVm: string };
  runs: { open: number; byStatus: Record<string, number> };
  workers: number;
  waiting: number;
}

export interface EpochList {
  current: number;
  epochs: EpochView[];
}

export interface EntryLabel {
  kind: string;
  label: string;
  callsite?: string;
}

export interface PendingRequest {
  action: "release" | "give-up";
  by: string;
  epoch?: number;
}

export interface QuarantineSummary {
  id: string;
  status: string;
  epoch: number;
  toolset: string;
  scriptHash?: string;
  seq: number;
  quarantinedAt: string;
  reason: string;
  message: string;
  divergence?: { seq: number; matched: number; recorded: EntryLabel; replayed?: EntryLabel };
  runEpoch?: number;
  workerEpochs?: number[];
  worker?: { owner?: string; build?: string; [key: string]: unknown };
  pending: PendingRequest[];
}

export interface QuarantineList {
  runs: QuarantineSummary[];
  next?: string;
}

export interface RunView {
  id: string;
  status: string;
  scriptHash: string;
  epoch: number;
}

export interface QuarantineDetail {
  run: RunView;
  quarantined: boolean;
  current?: QuarantineSummary;
  report?: Record<string, unknown>;
  history: {
    seq: number;
    kind: string;
    at: string;
    by?: string;
    epoch?: number;
    message?: string;
  }[];
}

export interface QuarantineAction {
  action: "release" | "give-up";
  state: "done" | "pending" | "unchanged";
  message: string;
  run: RunView;
}

/** An answer other than 2xx, with the API's message (or what went wrong on the way). */
export class ApiError extends Error {
  constructor(
    message: string,
    readonly status: number,
    readonly code: string,
  ) {
    super(message);
  }
}

export class Api {
  constructor(private readonly token: string) {}

  epochs(): Promise<EpochList> {
    return this.request("GET", "/v1/epochs");
  }

  quarantine(): Promise<QuarantineList> {
    return this.request("GET", "/v1/quarantine?limit=100");
  }

  quarantined(id: string): Promise<QuarantineDetail> {
    return this.request("GET", `/v1/quarantine/${encodeURIComponent(id)}`);
  }

  release(id: string, epoch: number | undefined): Promise<QuarantineAction> {
    const body = epoch === undefined ? {} : { epoch };
    return this.request("POST", `/v1/quarantine/${encodeURIComponent(id)}/release`, body);
  }

  giveUp(id: string, reason: string | undefined): Promise<QuarantineAction> {
    const body = reason === undefined ? {} : { reason };
    return this.request("POST", `/v1/quarantine/${encodeURIComponent(id)}/give-up`, body);
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
      throw new ApiError(`${message} (${code})`, response.status, code);
    }
    return json as T;
  }
}

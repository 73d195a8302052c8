import http from "node:http";
import https from "node:https";
import type { LookupFunction } from "node:net";
import { resolveChecked, type AddressPolicy } from "@rewind/core/outbound-address";

export interface SendOptions {
  policy: AddressPolicy;
  /** The whole attempt: connect, send, and read the answer. */
  timeoutMs: number;
  /** Read at most this much of the answer (the rest is dropped, the connection closed). */
  maxResponseBytes: number;
}

export interface SendResult {
  ok: boolean;
  status?: number;
  error?: string;
  /** The start of the answer's body, for the delivery log. */
  response?: string;
  durationMs: number;
}

/** How much of an answer the delivery log keeps. */
const LOGGED_CHARS = 1024;

/**
 * Idle connections are closed after this: below the keep-alive timeout servers commonly use
 * (Node's 5 s), so a pooled socket is rarely one the endpoint is closing as it is reused.
 */
const IDLE_MS = 4_000;
/** Connections kept open to one endpoint address at once, and endpoint addresses pooled. */
const SOCKETS_PER_ADDRESS = 8;
const MAX_POOLS = 256;

/**
 * Kept-alive connections by endpoint and checked address. A pooled socket was connected to the
 * address the policy allowed when its pool was made, and a pool serves that address only: a
 * delivery whose host now resolves elsewhere is checked again and gets another pool (or none,
 * refused), and a delivery the policy refuses never reaches a pool. Reuse saves each delivery
 * a connect (and a TLS handshake): under W1 with a webhook for every run event, connecting was
 * a large part of the dispatcher's CPU.
 */
const pools = new Map<string, http.Agent>();

function poolFor(target: URL, address: string): http.Agent {
  const key = `${target.protocol}//${target.host}@${address}`;
  let pool = pools.get(key);
  if (pool !== undefined) {
    pools.delete(key); // most recently used last: the oldest pool goes first
  } else {
    const options = { keepAlive: true, maxSockets: SOCKETS_PER_ADDRESS, timeout: IDLE_MS };
    pool = target.protocol === "https:" ? new https.Agent(options) : new http.Agent(options);
    if (pools.size >= MAX_POOLS) {
      const [oldest, agent] = pools.entries().next().value!;
      pools.delete(oldest);
      agent.destroy();
    }
  }
  pools.set(key, pool);
  return pool;
}

/**
 * POSTs one delivery. The host is resolved once and every address checked (addressPolicy); the
 * connection goes to a checked address (the lookup is pinned, so a second DNS answer cannot
 * steer it elsewhere), and is kept for the next delivery to that address; TLS still verifies
 * the host name. No redirect is followed: a 3xx is a
 * failed attempt. Never throws: every failure is a result for the log.
 */
export async function sendDelivery(
  url: string,
  headers: Record<string, string>,
  body: string,
  options: SendOptions,
): Promise<SendResult> {
  const started = performance.now();
  const done = (result: Omit<SendResult, "durationMs">): SendResult => ({
    ...result,
    durationMs: performance.now() - started,
  });
  let target: URL;
  try {
    target = new URL(url);
  } catch {
    return done({ ok: false, error: `${url} is not a URL` });
  }
  if (target.protocol !== "http:" && target.protocol !== "https:")
    return done({ ok: false, error: `${target.protocol} is not http: or https:` });
  let address: { address: string; family: 4 | 6 };
  try {
    address = (await resolveChecked(target.hostname, options.policy))[0]!;
  } catch (error) {
    return done({ ok: false, error: `refused: ${(error as Error).message}` });
  }
  const pinned: LookupFunction = (_host, lookupOptions, callback) => {
    if ((lookupOptions as { all?: boolean }).all)
      (callback as unknown as (e: null, a: { address: string; family: number }[]) => void)(null, [
        address,
      ]);
    else callback(null, address.address, address.family);
  };
  const signal = AbortSignal.timeout(options.timeoutMs);
  return new Promise<SendResult>((resolve) => {
    const client = target.protocol === "https:" ? https : http;
    const request = client.request(
      target,
      {
        method: "POST",
        headers: {
          ...headers,
          "content-type": "application/json",
          "content-length": String(Buffer.byteLength(body)),
          "user-agent": "Rewind-Webhooks/1",
        },
        lookup: pinned,
        signal,
        agent: poolFor(target, address.address),
      },
      (response) => {
        const status = response.statusCode ?? 0;
        const chunks: Buffer[] = [];
        let size = 0;
        const finish = () => {
          const text = Buffer.concat(chunks).toString("utf8").slice(0, LOGGED_CHARS);
          const ok = status >= 200 && status < 300;
          resolve(
            done({
              ok,
              status,
              ...(text ? { response: text } : {}),
              ...(ok
                ? {}
                : {
                    error:
                      status >= 300 && status < 400
                        ? `answered ${status} (a redirect, not followed: give the endpoint's final URL)`
                        : `answered ${status}`,
                  }),
            }),
          );
        };
        response.on("data", (chunk: Buffer) => {
          size += chunk.length;
          if (size <= options.maxResponseBytes) chunks.push(chunk);
          else {
            // Enough for the log: the rest is not read, the socket is closed.
            response.destroy();
            finish();
          }
        });
        response.on("end", finish);
        response.on("error", () => finish());
      },
    );
    request.on("error", (error) => {
      const reason = signal.aborted
        ? `no answer within ${options.timeoutMs} ms`
        : ((error as NodeJS.ErrnoException).code ?? error.message);
      resolve(done({ ok: false, error: reason }));
    });
    request.end(body);
  });
}

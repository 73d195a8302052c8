import { request as httpRequest, type IncomingMessage } from "node:http";

/**
 * The little of `fetch` the API client uses, over node:http. The CLI is a short-lived process:
 * loading fetch's implementation (undici) costs it 30–60 ms at every command, more than the
 * request itself against a local server. https goes through the real fetch.
 */
export const httpFetch = ((input: string, init: RequestInit = {}) => {
  const url = new URL(input);
  if (url.protocol !== "http:") return fetch(input, init);
  return new Promise((resolve, reject) => {
    const body = typeof init.body === "string" ? init.body : undefined;
    const request = httpRequest(
      url,
      {
        method: init.method ?? "GET",
        headers: {
          ...(init.headers as Record<string, string> | undefined),
          ...(body !== undefined ? { "content-length": Buffer.byteLength(body) } : {}),
        },
        agent: false, // one connection a request: nothing keeps the process alive afterwards
      },
      (response: IncomingMessage) => {
        const chunks: Buffer[] = [];
        response.on("data", (chunk: Buffer) => chunks.push(chunk));
        response.on("error", reject);
        response.on("end", () => {
          const status = response.statusCode ?? 0;
          const text = Buffer.concat(chunks).toString("utf8");
          resolve({ status, ok: status >= 200 && status < 300, text: async () => text });
        });
      },
    );
    request.on("error", reject);
    request.end(body);
  });
}) as unknown as typeof fetch;

import { request as httpRequest, type Agent, type IncomingMessage } from "node:http";

/**
 * The little of `fetch` the client uses (`method`, `headers`, a string `body`; `status`, `ok`,
 * `text()`), over node:http. In Node, fetch (undici) costs several times the CPU of node:http
 * for a small JSON request (about 400 µs against 65 µs here), and loading it costs a short-lived
 * process like the CLI 30–60 ms. Give `agent` a keep-alive `http.Agent` for many requests;
 * without one each request has its own connection, and nothing keeps the process alive
 * afterwards. https goes through the real fetch.
 */
export function httpFetch(options: { agent?: Agent } = {}): typeof fetch {
  const agent = options.agent ?? false;
  return ((input: string, init: RequestInit = {}) => {
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
          agent,
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
}

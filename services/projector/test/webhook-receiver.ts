import { createServer, type Server } from "node:http";

/** One request a receiver got, and what it answered. */
export interface Receipt {
  path: string;
  id: string;
  timestamp: string;
  signature: string;
  body: string;
  answered: number;
  at: number;
}

/**
 * A webhook endpoint on loopback: keeps every request, answers what `answer` says (200 by
 * default; a test makes it 500 for a while). /v1/traces answers 200 (a stand-in collector for
 * a projector process whose traces sink must not stall).
 */
export class Receiver {
  readonly receipts: Receipt[] = [];
  /** TCP connections accepted so far (kept-alive ones count once). */
  connections = 0;
  answer: (path: string, id: string) => number = () => 200;
  private server: Server | undefined;

  constructor(readonly port: number) {}

  url(path = "/hook"): string {
    return `http://127.0.0.1:${this.port}${path}`;
  }

  async start(): Promise<void> {
    this.server = createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on("data", (chunk: Buffer) => chunks.push(chunk));
      request.on("end", () => {
        const path = request.url ?? "/";
        if (path.startsWith("/v1/traces")) return void response.writeHead(200).end();
        if (path === "/redirect")
          return void response.writeHead(302, { location: this.url("/target") }).end();
        const answered = this.answer(path, String(request.headers["webhook-id"] ?? ""));
        this.receipts.push({
          path,
          id: String(request.headers["webhook-id"] ?? ""),
          timestamp: String(request.headers["webhook-timestamp"] ?? ""),
          signature: String(request.headers["webhook-signature"] ?? ""),
          body: Buffer.concat(chunks).toString("utf8"),
          answered,
          at: Date.now(),
        });
        response.writeHead(answered, { "content-type": "text/plain" }).end(`answered ${answered}`);
      });
    });
    this.server.on("connection", () => this.connections++);
    await new Promise<void>((resolve, reject) => {
      this.server!.once("error", reject);
      this.server!.listen(this.port, "127.0.0.1", () => resolve());
    });
  }

  async stop(): Promise<void> {
    await new Promise<void>((resolve) => this.server?.close(() => resolve()) ?? resolve());
  }

  /** The receipts at `path`, answered 2xx. */
  delivered(path = "/hook"): Receipt[] {
    return this.receipts.filter((r) => r.path === path && r.answered < 300);
  }
}

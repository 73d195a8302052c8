import type { FastifyReply } from "fastify";

/**
 * The API's closing, as the requests that wait see it: each long-poll gets a signal of its own,
 * aborted when its client leaves or when the API closes, so that it answers at once instead of
 * holding the close up. One controller a waiting request: AbortSignal.any over the request's
 * signal and the API's made every waiting start pay for weak references and a finalizer.
 */
export class Shutdown {
  private readonly waiting = new Set<AbortController>();
  private closed = false;

  get aborted(): boolean {
    return this.closed;
  }

  /** Aborts every request waiting now; a signal asked for from now on is aborted already. */
  abort(): void {
    this.closed = true;
    for (const waiting of this.waiting) waiting.abort();
    this.waiting.clear();
  }

  /** Aborted when `reply` closes before it is sent (the client left) or the API closes. */
  signalFor(reply: FastifyReply): AbortSignal {
    const controller = new AbortController();
    if (this.closed) {
      controller.abort();
      return controller.signal;
    }
    this.waiting.add(controller);
    // Only before the response is sent: an abort makes a DOMException, stack trace and all, which
    // a request answered as usual (every waiting start) need not pay for.
    reply.raw.once("close", () => {
      this.waiting.delete(controller);
      if (!reply.raw.writableFinished) controller.abort();
    });
    return controller.signal;
  }
}

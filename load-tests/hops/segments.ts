/**
 * The hops of bench.ts: the `rewind-hop <name> <runId> <ms>` lines the API and workers write
 * under REWIND_HOP_TRACE=1 (@rewind/telemetry's hops.ts), with the client's own marks, cut into
 * the segments of a run's path. A segment a run did not pass (a sticky pick-up, no notice) is
 * left out of that run's samples.
 */
/** The processes' hop clock (@rewind/telemetry's hopClock): ms since the Unix epoch. */
export const hopClock = (): number => performance.timeOrigin + performance.now();

export interface Mark {
  name: string;
  at: number;
  /** A commit's last seq. */
  seq?: number;
}

/** Each run's marks, in the order they happened. */
export type Marks = Map<string, Mark[]>;

const LINE = /^rewind-hop (\S+) (\S+) (\d+(?:\.\d+)?)(?: (\d+))?$/;

export function parseHops(logs: readonly string[], client: Marks): Marks {
  const marks: Marks = new Map([...client].map(([id, list]) => [id, [...list]]));
  for (const log of logs) {
    for (const line of log.split("\n")) {
      const match = LINE.exec(line);
      if (!match) continue;
      const [, name, runId, at, seq] = match;
      const list = marks.get(runId!) ?? [];
      list.push({
        name: name!,
        at: Number(at),
        ...(seq === undefined ? {} : { seq: Number(seq) }),
      });
      marks.set(runId!, list);
    }
  }
  for (const list of marks.values()) list.sort((a, b) => a.at - b.at);
  return marks;
}

export interface Segment {
  label: string;
  samples: number[];
  /** An end-to-end figure (printed under a rule), not one hop. */
  total: boolean;
}

/** From the first mark named `from` to the first named `to` after it. */
function between(list: readonly Mark[], from: string, to: string): number | undefined {
  const start = list.find((m) => m.name === from || m.name.startsWith(`${from}.`));
  if (start === undefined) return undefined;
  const end = list.find((m) => m.at >= start.at && (m.name === to || m.name.startsWith(`${to}.`)));
  return end === undefined ? undefined : end.at - start.at;
}

/**
 * Each step's tool invocation to the commit of its result (with the next call, or the end), and
 * its parts: the tool's outcome back at the executor, the script's next command produced (the
 * sandbox process's round trip), then the commit.
 */
function steps(list: readonly Mark[], part?: [string, string]): number[] {
  const out: number[] = [];
  list.forEach((mark, i) => {
    if (mark.name !== "worker.invoke") return;
    const rest = list.slice(i + 1);
    const end = rest.findIndex((m) => m.name === "worker.commit" || m.name === "worker.ended");
    if (end < 0) return;
    const within = rest.slice(0, end + 1);
    const at = (name: string) =>
      name === "worker.invoke"
        ? mark.at
        : name === "worker.commit"
          ? within[end]!.at
          : within.find((m) => m.name === name)?.at;
    const [from, to] = part ?? ["worker.invoke", "worker.commit"];
    const start = at(from);
    const stop = at(to);
    if (start !== undefined && stop !== undefined) out.push(stop - start);
  });
  return out;
}

/** The last notice the API heard for the run before it answered the result. */
function noticeToResult(list: readonly Mark[]): [number, number] | undefined {
  const ended = list.find((m) => m.name === "worker.ended");
  const result = list.find((m) => m.name === "api.result");
  if (ended === undefined || result === undefined) return undefined;
  const notice = list.find((m) => m.name === "api.notice" && m.at >= ended.at - 1);
  return notice === undefined ? undefined : [notice.at - ended.at, result.at - notice.at];
}

const HOPS: readonly [string, string, string][] = [
  ["client → API handler (HTTP, auth, body schema)", "client.post", "api.received"],
  ["API: script lookup, run insert", "api.received", "api.inserted"],
  ["API: ring (an offer to a worker, or a queued job)", "api.inserted", "api.rung"],
  ["API → client: the 201", "api.rung", "client.created"],
  ["ring sent → worker pick-up (an offer, or the queue)", "api.inserted", "worker.taken"],
  ["worker: lease + load (one round trip)", "worker.taken", "worker.leased"],
  // The context is asked for, not awaited: the start follows it down the sandbox process's pipe.
  ["worker: lease + load → context asked for", "worker.leased", "worker.context"],
  ["worker: pick-up → context asked for (either path)", "worker.taken", "worker.context"],
  ["worker: sandbox context, top level to its first call", "worker.context", "worker.toplevel"],
  ["worker: first commit (run.started … call 1)", "worker.toplevel", "worker.commit"],
  ["worker: commit → tool invoked", "worker.commit", "worker.invoke"],
];

const STEP_PARTS: readonly [string, string, string][] = [
  ["  tool invoked → outcome at the executor", "worker.invoke", "worker.outcome"],
  ["  outcome → the script's next command", "worker.outcome", "worker.produced"],
  ["  next command → committed", "worker.produced", "worker.commit"],
];

export function hopSegments(runIds: readonly string[], marks: Marks): Segment[] {
  const lists = runIds.map((id) => marks.get(id) ?? []);
  const collect = (f: (list: readonly Mark[]) => number | number[] | undefined) =>
    lists.flatMap((list) => {
      const value = f(list);
      return value === undefined ? [] : value;
    });
  const notices = lists.map(noticeToResult);
  return [
    ...HOPS.map(([label, from, to]) => ({
      label,
      samples: collect((list) => between(list, from, to)),
      total: false,
    })),
    {
      label: "each step: tool invoked → its result committed",
      samples: collect((list) => steps(list)),
      total: false,
    },
    ...STEP_PARTS.map(([label, from, to]) => ({
      label,
      samples: collect((list) => steps(list, [from, to])),
      total: false,
    })),
    {
      label: "last commit → notice at the API",
      samples: notices.flatMap((n) => (n === undefined ? [] : [n[0]])),
      total: false,
    },
    {
      label: "API: notice → result read and answered",
      samples: notices.flatMap((n) => (n === undefined ? [] : [n[1]])),
      total: false,
    },
    {
      label: "API result → client",
      samples: collect((list) => between(list, "api.result", "client.result")),
      total: false,
    },
    {
      label: "POST → first tool call",
      samples: collect((list) => between(list, "client.post", "worker.invoke")),
      total: true,
    },
    {
      label: "POST → result at the client (the workflow)",
      samples: collect((list) => between(list, "client.post", "client.result")),
      total: false,
    },
  ];
}

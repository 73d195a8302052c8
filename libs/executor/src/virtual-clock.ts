import type { IncomingEvent } from "@rewind/journal";

/**
 * Events waiting for their virtual time. Order is total and independent of how fast real tools
 * answer: by due time, then call results before timers before signals, then by the seq of what
 * caused them. So a mock-mode run, and its resumption from any prefix, deliver events in the same
 * order every time.
 */
export interface Scheduled {
  due: number;
  rank: 0 | 1 | 2;
  order: number;
  event: IncomingEvent;
}

export class VirtualSchedule {
  private items: Scheduled[] = [];

  add(item: Scheduled): void {
    this.items.push(item);
  }

  removeTimer(timerSeq: number): void {
    this.items = this.items.filter(
      (item) => !(item.event.kind === "timer.fired" && item.event.timerSeq === timerSeq),
    );
  }

  /** The next event, with its time moved to its due time. */
  next(): IncomingEvent | undefined {
    if (this.items.length === 0) return undefined;
    let best = 0;
    for (let i = 1; i < this.items.length; i++)
      if (before(this.items[i]!, this.items[best]!)) best = i;
    const [item] = this.items.splice(best, 1);
    return { ...item!.event, at: item!.due };
  }

  get size(): number {
    return this.items.length;
  }
}

function before(a: Scheduled, b: Scheduled): boolean {
  if (a.due !== b.due) return a.due < b.due;
  if (a.rank !== b.rank) return a.rank < b.rank;
  return a.order < b.order;
}

import type { Database } from 'bun:sqlite';
import type { ChangeType, TrafficEvent } from '../domain/event.ts';

export type EventFilter = (ev: TrafficEvent) => boolean;

interface Row {
  seq: number;
  change: ChangeType;
  payload: string;
}

interface Subscriber {
  filter: EventFilter;
  send: (frame: string) => void;
}

/** At most this many missed changes are replayed for a Last-Event-ID; older ones need a resync. */
export const MAX_REPLAY = 10_000;
const POLL_BATCH = 2_000;

/** One Server-Sent Events frame per change: id = outbox seq, event = change type, data = Event. */
export function sseFrame(seq: number, change: ChangeType, payload: string): string {
  return `id: ${seq}\nevent: traffic_event.${change}\ndata: ${payload}\n\n`;
}

/**
 * The live side of the event_changes outbox. After each scan commit `poll()` reads the new rows
 * once and hands each to the subscribers whose filters match; a subscriber that comes back with a
 * Last-Event-ID is first replayed what it missed, in the same synchronous step as it subscribes,
 * so nothing falls between replay and live.
 */
export class ChangeFeed {
  private lastSeq: number;
  private readonly subs = new Set<Subscriber>();

  constructor(private readonly db: Database) {
    this.lastSeq = db.query<{ s: number | null }, []>('SELECT max(seq) AS s FROM event_changes').get()?.s ?? 0;
  }

  get subscribers(): number {
    return this.subs.size;
  }

  get seq(): number {
    return this.lastSeq;
  }

  /** Reads changes committed since the last poll and fans them out. Returns how many were read. */
  poll(): number {
    if (this.subs.size === 0) {
      // Nobody is listening: skip the rows (a subscriber that comes later replays from its
      // Last-Event-ID, which reads the outbox itself).
      const max = this.db.query<{ s: number | null }, []>('SELECT max(seq) AS s FROM event_changes').get()?.s ?? 0;
      const n = Math.max(0, max - this.lastSeq);
      this.lastSeq = Math.max(this.lastSeq, max);
      return n;
    }
    const stmt = this.db.query<Row, [number, number]>('SELECT seq, change, payload FROM event_changes WHERE seq > ? ORDER BY seq LIMIT ?');
    let total = 0;
    for (;;) {
      const rows = stmt.all(this.lastSeq, POLL_BATCH);
      for (const row of rows) this.dispatch(row);
      total += rows.length;
      if (rows.length > 0) this.lastSeq = rows[rows.length - 1]!.seq;
      if (rows.length < POLL_BATCH) return total;
    }
  }

  private dispatch(row: Row): void {
    if (this.subs.size === 0) return;
    const ev = JSON.parse(row.payload) as TrafficEvent;
    let frame: string | undefined;
    for (const sub of this.subs) {
      if (!sub.filter(ev)) continue;
      frame ??= sseFrame(row.seq, row.change, row.payload);
      sub.send(frame);
    }
  }

  /**
   * Replays matching changes after `afterSeq` (when given) through `send`, then subscribes for
   * live ones. Returns the unsubscribe function and whether the replay was cut at MAX_REPLAY.
   */
  subscribe(filter: EventFilter, send: (frame: string) => void, afterSeq: number | null): { unsubscribe: () => void; truncated: boolean } {
    let truncated = false;
    if (afterSeq !== null && afterSeq < this.lastSeq) {
      const rows = this.db
        .query<Row, [number, number, number]>('SELECT seq, change, payload FROM event_changes WHERE seq > ? AND seq <= ? ORDER BY seq DESC LIMIT ?')
        .all(afterSeq, this.lastSeq, MAX_REPLAY + 1);
      if (rows.length > MAX_REPLAY) {
        truncated = true;
        rows.length = MAX_REPLAY;
      }
      for (let i = rows.length - 1; i >= 0; i--) {
        const row = rows[i]!;
        if (filter(JSON.parse(row.payload) as TrafficEvent)) send(sseFrame(row.seq, row.change, row.payload));
      }
    }
    const sub: Subscriber = { filter, send };
    this.subs.add(sub);
    return { unsubscribe: () => this.subs.delete(sub), truncated };
  }
}

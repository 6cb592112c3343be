/**
 * Fan-out: outbox (`event_changes`) → one `webhook_deliveries` row per change and matching active
 * endpoint, advancing each endpoint's `cursor_seq` in the same short transaction, so a change is
 * fanned out exactly once (and `msg_id` is unique besides). The body is built here, once per
 * change, and stored: every attempt sends exactly these bytes.
 */
import type { Database } from 'bun:sqlite';
import { iso } from '../clock.ts';
import type { EventType } from '../domain/event.ts';
import { sqliteOf, stmt, writeTx, type DbHandle } from './db.ts';

/** Delivery rows written per transaction: ~5–10 ms of writing, then the event loop gets a turn. */
export const FANOUT_ROWS_PER_TX = 1000;

/** A delivery row just written by the fan-out (what the worker needs to queue it without reading it back). */
export interface FannedOut {
  id: number;
  endpointId: string;
  seq: number;
  eventId: string;
  msgId: string;
  nextAt: number;
}

export interface FanOutHooks {
  /** Each change's body, once, after the commit. */
  onBody?: (seq: number, body: string) => void;
  /** The rows written, in (endpoint, seq) order, after the commit. */
  onRows?: (rows: FannedOut[]) => void;
}

export interface FanOutResult {
  /** Outbox rows read. */
  changes: number;
  /** Delivery rows written. */
  deliveries: number;
  /** Endpoints that got new deliveries. */
  endpoints: Set<string>;
  /** Stopped because another connection held the write lock; call again shortly. */
  busy: boolean;
}

interface EndpointRow {
  id: string;
  types: string | null;
  cities: string | null;
  cursor_seq: number;
}

interface ChangeRow {
  seq: number;
  event_id: string;
  change: string;
  at: number;
  payload: string;
}

/** The delivery id: the same on every retry (`webhook-id`), the consumer's idempotency key. */
export function messageId(endpointId: string, seq: number): string {
  return `msg_${endpointId}_${seq}`;
}

/** `{"type":"traffic_event.<change>","timestamp":"<change time>","data":<Event JSON as stored>}`. */
export function changeBody(change: string, at: number, payload: string): string {
  return `{"type":"traffic_event.${change}","timestamp":"${iso(at)}","data":${payload}}`;
}

function eventKeys(payload: string): { type: EventType | null; plate: number | null } {
  try {
    const ev = JSON.parse(payload) as { type?: unknown; city?: { plate?: unknown } };
    return { type: typeof ev.type === 'string' ? (ev.type as EventType) : null, plate: typeof ev.city?.plate === 'number' ? ev.city.plate : null };
  } catch {
    return { type: null, plate: null };
  }
}

/** One transaction's worth. `more` tells whether outbox rows are left for the next call. */
export function fanOutBatch(
  handle: DbHandle,
  now: number,
  maxRows = FANOUT_ROWS_PER_TX,
  hooks: FanOutHooks = {},
): FanOutResult & { more: boolean } {
  const db = sqliteOf(handle);
  const result: FanOutResult & { more: boolean } = { changes: 0, deliveries: 0, endpoints: new Set(), busy: false, more: false };
  // Nothing new for any active endpoint: no write transaction at all (the timer calls this every second).
  const behind = stmt<{ c: number | null; m: number | null }, []>(
    db,
    "SELECT (SELECT MIN(cursor_seq) FROM webhook_endpoints WHERE status = 'active' AND key_id IN (SELECT id FROM api_keys WHERE revoked_at IS NULL AND plan = 'enterprise')) AS c, (SELECT MAX(seq) FROM event_changes) AS m",
  ).get();
  if (behind === null || behind.c === null || behind.m === null || behind.m <= behind.c) return result;
  const built: [number, string][] = [];
  const written: FannedOut[] = [];
  const tx = writeTx(db, () => {
    // Read inside the write transaction: an endpoint removed meanwhile cannot get rows.
    const endpoints = stmt<EndpointRow, []>(db, "SELECT id, types, cities, cursor_seq FROM webhook_endpoints WHERE status = 'active' AND key_id IN (SELECT id FROM api_keys WHERE revoked_at IS NULL AND plan = 'enterprise')").all();
    if (endpoints.length === 0) return;
    let from = Number.POSITIVE_INFINITY;
    for (const e of endpoints) from = Math.min(from, e.cursor_seq);
    const limit = Math.max(1, Math.min(1000, Math.floor(maxRows / endpoints.length)));
    const changes = stmt<ChangeRow, [number, number]>(db, 'SELECT seq, event_id, change, at, payload FROM event_changes WHERE seq > ? ORDER BY seq LIMIT ?').all(from, limit);
    if (changes.length === 0) return;
    result.changes = changes.length;
    result.more = changes.length === limit;
    const keys = changes.map((c) => eventKeys(c.payload));
    const bodies: (string | undefined)[] = new Array(changes.length);
    const insert = stmt<unknown, [string, number, string, string, string, string, number, number]>(
      db,
      "INSERT OR IGNORE INTO webhook_deliveries (endpoint_id, change_seq, event_id, msg_id, event_type, payload, status, attempts, next_attempt_at, created_at) VALUES (?, ?, ?, ?, ?, ?, 'pending', 0, ?, ?)",
    );
    const advance = stmt<unknown, [number, string, number]>(db, 'UPDATE webhook_endpoints SET cursor_seq = ? WHERE id = ? AND cursor_seq = ?');
    const last = changes[changes.length - 1]!.seq;
    for (const e of endpoints) {
      if (e.cursor_seq >= last) continue;
      const types = e.types === null ? null : (JSON.parse(e.types) as string[]);
      const cities = e.cities === null ? null : (JSON.parse(e.cities) as number[]);
      for (let i = 0; i < changes.length; i++) {
        const c = changes[i]!;
        if (c.seq <= e.cursor_seq) continue;
        const k = keys[i]!;
        if (types !== null && (k.type === null || !types.includes(k.type))) continue;
        if (cities !== null && (k.plate === null || !cities.includes(k.plate))) continue;
        let body = bodies[i];
        if (body === undefined) {
          body = bodies[i] = changeBody(c.change, c.at, c.payload);
          built.push([c.seq, body]);
        }
        const msgId = messageId(e.id, c.seq);
        const r = insert.run(e.id, c.seq, c.event_id, msgId, `traffic_event.${c.change}`, body, now, now);
        if (r.changes > 0) {
          result.deliveries++;
          result.endpoints.add(e.id);
          if (hooks.onRows !== undefined) written.push({ id: Number(r.lastInsertRowid), endpointId: e.id, seq: c.seq, eventId: c.event_id, msgId, nextAt: now });
        }
      }
      advance.run(last, e.id, e.cursor_seq);
    }
  });
  if (tx.busy) {
    return { changes: 0, deliveries: 0, endpoints: new Set(), busy: true, more: true };
  }
  // Committed: the caller may keep the bodies and spare itself reading them back.
  if (hooks.onBody !== undefined) for (const [seq, body] of built) hooks.onBody(seq, body);
  if (hooks.onRows !== undefined && written.length > 0) hooks.onRows(written);
  return result;
}

const yieldToLoop = () => new Promise<void>((r) => setImmediate(r));

/**
 * Everything committed so far, in short transactions with an event-loop turn between them. Stops
 * early (busy: true) when another connection holds the write lock: nothing is lost, the cursors
 * say where to resume.
 */
export async function fanOut(
  handle: DbHandle,
  now: number,
  opts: { maxRowsPerTx?: number; pause?: () => Promise<void> } & FanOutHooks = {},
): Promise<FanOutResult> {
  const db: Database = sqliteOf(handle);
  const total: FanOutResult = { changes: 0, deliveries: 0, endpoints: new Set(), busy: false };
  for (;;) {
    const r = fanOutBatch(db, now, opts.maxRowsPerTx, opts);
    total.changes += r.changes;
    total.deliveries += r.deliveries;
    for (const e of r.endpoints) total.endpoints.add(e);
    if (r.busy) {
      total.busy = true;
      return total;
    }
    if (!r.more) return total;
    await (opts.pause ?? yieldToLoop)();
  }
}

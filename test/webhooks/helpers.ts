/**
 * What the webhook tests share: a real SQLite file with an Enterprise key, outbox rows written the
 * way the scanner writes them, real local receivers (Bun.serve on 127.0.0.1) whose behaviour a
 * test scripts, and verification with the official `standardwebhooks` package.
 */
import { setSystemTime } from 'bun:test';
import type { Database } from 'bun:sqlite';
import { Webhook } from 'standardwebhooks';
import type { ChangeType, EventType } from '../../src/domain/event.ts';
import { toApiEvent } from '../../src/read-model/event-json.ts';
import type { EventRow } from '../../src/db/schema/index.ts';
import { addEndpoint } from '../../src/webhooks/index.ts';
import { eventRow } from '../helpers/factories.ts';
import { tempDb, type TempDb } from '../helpers/db.ts';

export { manualClock, type ManualClock } from '../helpers/fake-upstream.ts';

let keyN = 0;

export function insertKey(db: Database, plan: 'free' | 'enterprise' = 'enterprise', revoked = false): string {
  const id = `key_test${String(++keyN).padStart(12, '0')}`;
  db.query('INSERT INTO api_keys (id, hash, prefix, plan, name, created_at, revoked_at) VALUES (?, ?, ?, ?, ?, ?, ?)').run(
    id,
    `hash-${id}-${Math.random()}`,
    'trk_live_test…',
    plan,
    `test ${plan}`,
    Date.now(),
    revoked ? Date.now() : null,
  );
  return id;
}

export interface Setup extends TempDb {
  keyId: string;
}

export function setup(): Setup {
  const t = tempDb();
  return Object.assign(t, { keyId: insertKey(t.sqlite) });
}

export interface ChangeSpec {
  eventId: string;
  change?: ChangeType;
  type?: EventType;
  plate?: number;
  at?: number;
}

/** Outbox rows as the scanner writes them (Event JSON payload), in one transaction. Returns their seqs. */
export function commitChanges(db: Database, specs: ChangeSpec[], at = Date.now()): number[] {
  const ins = db.query<{ seq: number }, [string, string, number, null, string]>(
    'INSERT INTO event_changes (event_id, change, at, scan_id, payload) VALUES (?, ?, ?, ?, ?) RETURNING seq',
  );
  const seqs: number[] = [];
  db.transaction(() => {
    for (const s of specs) {
      const row = eventRow({ id: s.eventId, type: s.type ?? 'accident', plate: s.plate ?? 34 }, s.at ?? at) as EventRow;
      seqs.push(ins.get(s.eventId, s.change ?? 'created', s.at ?? at, null, JSON.stringify(toApiEvent(row)))!.seq);
    }
  }).immediate();
  return seqs;
}

export async function subscribe(db: Database, keyId: string, url: string, filters: { types?: EventType[]; cities?: number[] } = {}, now = Date.now()) {
  return addEndpoint(db, { keyId, url, types: filters.types ?? null, cities: filters.cities ?? null }, { now, allowPrivate: true });
}

export interface Received {
  id: string;
  timestamp: string;
  signature: string;
  body: string;
  path: string;
  /** The fake clock at receipt (ms), when the receiver was given one. */
  clockAt: number;
  n: number;
}

export type Behaviour = (r: Received) => Response | Promise<Response>;

export interface Receiver {
  url: string;
  port: number;
  received: Received[];
  /** Messages answered 2xx, by webhook-id. */
  okIds: Set<string>;
  behaviour: Behaviour;
  stop(): Promise<void>;
  /** Listen again on the same port (a receiver that was down and came back). */
  restart(): void;
}

/** A real HTTP receiver on 127.0.0.1; answers 204 unless `behaviour` says otherwise. */
export function startReceiver(opts: { clock?: () => number; behaviour?: Behaviour; port?: number } = {}): Receiver {
  const received: Received[] = [];
  const okIds = new Set<string>();
  let server: ReturnType<typeof Bun.serve> | null = null;
  const listen = (port: number) =>
    Bun.serve({
      hostname: '127.0.0.1',
      port,
      idleTimeout: 30,
      fetch: async (req) => {
        const body = await req.text();
        const r: Received = {
          id: req.headers.get('webhook-id') ?? '',
          timestamp: req.headers.get('webhook-timestamp') ?? '',
          signature: req.headers.get('webhook-signature') ?? '',
          body,
          path: new URL(req.url).pathname,
          clockAt: opts.clock ? opts.clock() : Date.now(),
          n: received.length + 1,
        };
        received.push(r);
        const res = await rec.behaviour(r);
        if (res.status >= 200 && res.status < 300) okIds.add(r.id);
        return res;
      },
    });
  server = listen(opts.port ?? 0);
  const port = server.port!;
  const rec: Receiver = {
    url: `http://127.0.0.1:${port}/hook`,
    port,
    received,
    okIds,
    behaviour: opts.behaviour ?? (() => new Response(null, { status: 204 })),
    async stop() {
      if (server !== null) await server.stop(true);
      server = null;
    },
    restart() {
      if (server === null) server = listen(port);
    },
  };
  return rec;
}

/**
 * Verifies one received message with the official Standard Webhooks library, "now" being the
 * moment it was received on the test's clock (the library checks a 5-minute timestamp window).
 */
export function verify(secret: string, r: Received): unknown {
  setSystemTime(new Date(r.clockAt));
  try {
    return new Webhook(secret).verify(r.body, { 'webhook-id': r.id, 'webhook-timestamp': r.timestamp, 'webhook-signature': r.signature });
  } finally {
    setSystemTime();
  }
}

export function deliveryRows(db: Database, endpointId?: string) {
  type Row = { id: number; endpoint_id: string; change_seq: number; event_id: string; msg_id: string; status: string; attempts: number; next_attempt_at: number; last_status: number | null; last_error: string | null };
  return endpointId === undefined
    ? db.query<Row, []>('SELECT id, endpoint_id, change_seq, event_id, msg_id, status, attempts, next_attempt_at, last_status, last_error FROM webhook_deliveries ORDER BY id').all()
    : db
        .query<Row, [string]>('SELECT id, endpoint_id, change_seq, event_id, msg_id, status, attempts, next_attempt_at, last_status, last_error FROM webhook_deliveries WHERE endpoint_id = ? ORDER BY id')
        .all(endpointId);
}

export function endpointRow(db: Database, id: string) {
  return db
    .query<
      { status: string; disabled_reason: string | null; consecutive_failures: number; failing_since: number | null; last_success_at: number | null; last_failure_at: number | null; cursor_seq: number },
      [string]
    >('SELECT status, disabled_reason, consecutive_failures, failing_since, last_success_at, last_failure_at, cursor_seq FROM webhook_endpoints WHERE id = ?')
    .get(id)!;
}

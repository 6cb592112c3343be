/**
 * The worker against real local receivers (Bun.serve on 127.0.0.1; fetch is never mocked), on a
 * real SQLite file, with a manual clock: retry schedules are walked by moving the clock and
 * draining, never by waiting. Every received message is verified with the official
 * `standardwebhooks` package.
 */
import { afterEach, describe, expect, test } from 'bun:test';
import { openDatabase, type OpenedDb } from '../../src/db/client.ts';
import { createWebhookWorker, RETRY_SCHEDULE_MS, type WebhookWorkerControl, type WebhookWorkerDeps } from '../../src/webhooks/index.ts';
import {
  commitChanges,
  deliveryRows,
  endpointRow,
  manualClock,
  setup,
  startReceiver,
  subscribe,
  verify,
  type Behaviour,
  type ManualClock,
  type Receiver,
  type Setup,
} from './helpers.ts';

const ok = () => new Response(null, { status: 204 });
const status = (code: number, headers: Record<string, string> = {}) => new Response('nope', { status: code, headers });

interface H {
  s: Setup;
  clock: ManualClock;
  rx: Receiver;
  conn: OpenedDb;
  worker: WebhookWorkerControl;
  endpointId: string;
  secret: string;
  /** A fresh worker over the same file (a restart). */
  restart(deps?: Partial<WebhookWorkerDeps>): WebhookWorkerControl;
  /** Moves the clock to the earliest retry still ahead, and drains. */
  nextRound(): Promise<void>;
}

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()!();
});

async function harness(behaviour: Behaviour = ok, deps: Partial<WebhookWorkerDeps> = {}, filters: Parameters<typeof subscribe>[3] = {}): Promise<H> {
  const s = setup();
  const clock = manualClock(Date.now());
  const rx = startReceiver({ clock: clock.now, behaviour });
  const { endpoint, secret } = await subscribe(s.sqlite, s.keyId, rx.url, filters, clock.now());
  const conns: OpenedDb[] = [];
  const workers: WebhookWorkerControl[] = [];
  const make = (more: Partial<WebhookWorkerDeps> = {}) => {
    const conn = openDatabase(s.path, { busyTimeoutMs: 0 });
    conns.push(conn);
    const w = createWebhookWorker({ db: conn.sqlite, clock: clock.now, allowPrivate: true, random: () => 0.5, ...deps, ...more });
    workers.push(w);
    return w;
  };
  const worker = make();
  cleanups.push(async () => {
    for (const w of workers) await w.stop();
    await rx.stop();
    for (const c of conns) c.sqlite.close();
    s.cleanup();
  });
  const h: H = {
    s,
    clock,
    rx,
    conn: conns[0]!,
    worker,
    endpointId: endpoint.id,
    secret,
    restart: make,
    async nextRound() {
      const next = s.sqlite
        .query<{ t: number | null }, [number]>("SELECT MIN(next_attempt_at) AS t FROM webhook_deliveries WHERE status = 'pending' AND next_attempt_at > ?")
        .get(clock.now())!.t;
      if (next !== null) clock.set(next);
      await h.worker.drain();
    },
  };
  return h;
}

function bodyOf(r: { body: string }) {
  return JSON.parse(r.body) as { type: string; timestamp: string; data: { id: string; type: string } };
}

describe('delivery', () => {
  test('every change is delivered once, signed (verified by standardwebhooks), in change order', async () => {
    // One at a time, arrival order is change order (with more, only their start order is).
    const h = await harness(ok, { perEndpointConcurrency: 1 });
    const seqs = commitChanges(h.s.sqlite, [{ eventId: 'evt_a' }, { eventId: 'evt_b', type: 'jam' }, { eventId: 'evt_a', change: 'updated' }, { eventId: 'evt_b', change: 'cleared' }]);
    const at = h.clock.now();
    const r = await h.worker.drain();
    expect(r).toEqual({ attempts: 4, unwritten: 0 });
    expect(h.rx.received.map((m) => m.id)).toEqual(seqs.map((q) => `msg_${h.endpointId}_${q}`));
    const outbox = h.s.sqlite.query<{ payload: string; change: string }, []>('SELECT payload, change FROM event_changes ORDER BY seq').all();
    h.rx.received.forEach((m, i) => {
      const payload = verify(h.secret, m) as { type: string; data: unknown };
      expect(payload.type).toBe(`traffic_event.${outbox[i]!.change}`);
      expect(payload.data).toEqual(JSON.parse(outbox[i]!.payload));
      expect(m.timestamp).toBe(String(Math.floor(at / 1000)));
    });
    expect(deliveryRows(h.s.sqlite).map((d) => [d.status, d.attempts, d.last_status])).toEqual(Array(4).fill(['delivered', 1, 204]));
    expect(endpointRow(h.s.sqlite, h.endpointId)).toMatchObject({ status: 'active', consecutive_failures: 0, failing_since: null, last_success_at: at });
  });

  test('a failure is retried on the schedule (±10 % jitter), with the same webhook-id and the same bytes', async () => {
    let n = 0;
    const h = await harness(() => (++n <= 3 ? status(500) : ok()), { random: () => 0 });
    commitChanges(h.s.sqlite, [{ eventId: 'evt_a' }]);
    const t0 = h.clock.now();
    await h.worker.drain();
    let [d] = deliveryRows(h.s.sqlite);
    expect(d).toMatchObject({ status: 'pending', attempts: 1, last_status: 500, last_error: 'HTTP 500' });
    expect(d!.next_attempt_at - t0).toBe(4_500); // 5 s − 10 %
    // Not before it is due.
    h.clock.advance(4_499);
    expect((await h.worker.drain()).attempts).toBe(0);
    h.clock.advance(1);
    expect((await h.worker.drain()).attempts).toBe(1);
    [d] = deliveryRows(h.s.sqlite);
    expect(d!.next_attempt_at - h.clock.now()).toBe(270_000); // 5 min − 10 %
    await h.nextRound();
    [d] = deliveryRows(h.s.sqlite);
    expect(d!.next_attempt_at - h.clock.now()).toBe(1_620_000); // 30 min − 10 %
    expect(endpointRow(h.s.sqlite, h.endpointId)).toMatchObject({ consecutive_failures: 3, failing_since: t0 });
    await h.nextRound();
    [d] = deliveryRows(h.s.sqlite);
    expect(d).toMatchObject({ status: 'delivered', attempts: 4, last_status: 204, last_error: null });
    expect(endpointRow(h.s.sqlite, h.endpointId)).toMatchObject({ consecutive_failures: 0, failing_since: null, last_success_at: h.clock.now() });
    const ids = new Set(h.rx.received.map((m) => m.id));
    expect(ids.size).toBe(1);
    expect(new Set(h.rx.received.map((m) => m.body)).size).toBe(1);
    for (const m of h.rx.received) verify(h.secret, m);
    // webhook-timestamp is each attempt's time.
    expect(new Set(h.rx.received.map((m) => m.timestamp)).size).toBe(4);
  });

  test('after the last step (24 h) the delivery is given up: 8 attempts over ~41.6 h', async () => {
    const h = await harness(() => status(500));
    commitChanges(h.s.sqlite, [{ eventId: 'evt_a' }]);
    const t0 = h.clock.now();
    await h.worker.drain();
    for (let i = 0; i < 10; i++) await h.nextRound();
    const [d] = deliveryRows(h.s.sqlite);
    expect(d).toMatchObject({ status: 'failed', attempts: 8, last_status: 500, last_error: 'HTTP 500' });
    expect(h.rx.received).toHaveLength(8);
    expect(h.clock.now() - t0).toBe(RETRY_SCHEDULE_MS.reduce((a, b) => a + b, 0));
    // Under 5 days of failure: the endpoint stays active.
    expect(endpointRow(h.s.sqlite, h.endpointId)).toMatchObject({ status: 'active', consecutive_failures: 8 });
  });

  test('429 with Retry-After waits that long (never less than the step, at most 24 h)', async () => {
    const answers = [status(429, { 'retry-after': '120' }), status(503, { 'retry-after': '1' }), status(429, { 'retry-after': '999999' })];
    const h = await harness(() => answers.shift() ?? ok());
    commitChanges(h.s.sqlite, [{ eventId: 'evt_a' }]);
    await h.worker.drain();
    let [d] = deliveryRows(h.s.sqlite);
    expect(d!.next_attempt_at - h.clock.now()).toBe(120_000);
    expect(d).toMatchObject({ last_status: 429, last_error: 'HTTP 429' });
    h.clock.advance(119_999);
    expect((await h.worker.drain()).attempts).toBe(0);
    h.clock.advance(1);
    await h.worker.drain();
    [d] = deliveryRows(h.s.sqlite);
    expect(d!.next_attempt_at - h.clock.now()).toBe(300_000); // Retry-After 1 s < the 5 min step
    await h.nextRound();
    [d] = deliveryRows(h.s.sqlite);
    expect(d!.next_attempt_at - h.clock.now()).toBe(86_400_000); // capped
    await h.nextRound();
    expect(deliveryRows(h.s.sqlite)[0]).toMatchObject({ status: 'delivered', attempts: 4 });
  });

  test('410 Gone disables the endpoint; its pending deliveries stop and no new ones are made', async () => {
    const h = await harness((m) => (m.n === 1 ? status(410) : ok()), { perEndpointConcurrency: 1 });
    commitChanges(h.s.sqlite, [{ eventId: 'e1' }, { eventId: 'e2' }, { eventId: 'e3' }]);
    await h.worker.drain();
    expect(h.rx.received).toHaveLength(1);
    expect(endpointRow(h.s.sqlite, h.endpointId)).toMatchObject({ status: 'disabled', disabled_reason: '410 Gone from receiver' });
    const rows = deliveryRows(h.s.sqlite);
    expect(rows.map((r) => [r.status, r.last_status])).toEqual([
      ['failed', 410],
      ['failed', null],
      ['failed', null],
    ]);
    expect(rows[1]!.last_error).toBe('endpoint disabled: 410 Gone from receiver');
    commitChanges(h.s.sqlite, [{ eventId: 'e4' }]);
    h.clock.advance(86_400_000);
    await h.worker.drain();
    expect(h.rx.received).toHaveLength(1);
    expect(deliveryRows(h.s.sqlite)).toHaveLength(3);
  });

  test('an endpoint failing for 5 days without a success is disabled', async () => {
    const h = await harness(() => status(503));
    const t0 = h.clock.now();
    // A new change every 6 hours keeps the endpoint failing.
    for (let i = 0; i < 24 && endpointRow(h.s.sqlite, h.endpointId).status === 'active'; i++) {
      commitChanges(h.s.sqlite, [{ eventId: `e${i}` }], h.clock.now());
      await h.worker.drain();
      h.clock.advance(6 * 3_600_000);
    }
    const ep = endpointRow(h.s.sqlite, h.endpointId);
    expect(ep.status).toBe('disabled');
    expect(ep.disabled_reason).toMatch(/^failing without a success for 5 days \(since \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ\)$/);
    expect(ep.failing_since).toBe(t0);
    const disabledAt = h.s.sqlite.query<{ disabled_at: number }, [string]>('SELECT disabled_at FROM webhook_endpoints WHERE id = ?').get(h.endpointId)!.disabled_at;
    expect(disabledAt - t0).toBeGreaterThanOrEqual(5 * 86_400_000);
    expect(disabledAt - t0).toBeLessThan(5 * 86_400_000 + 6 * 3_600_000);
    expect(deliveryRows(h.s.sqlite).filter((r) => r.status === 'pending')).toHaveLength(0);
  });

  test('3xx is a failure: redirects are not followed', async () => {
    let hits = 0;
    const target = startReceiver({ behaviour: () => (hits++, ok()) });
    cleanups.push(() => target.stop());
    const h = await harness(() => new Response(null, { status: 302, headers: { location: target.url } }));
    commitChanges(h.s.sqlite, [{ eventId: 'e1' }]);
    await h.worker.drain();
    expect(deliveryRows(h.s.sqlite)[0]).toMatchObject({ status: 'pending', last_status: 302, last_error: 'HTTP 302 (redirects are not followed)' });
    expect(hits).toBe(0);
  });

  test('a receiver that does not answer in time: the attempt times out and is retried', async () => {
    let slow = true;
    const h = await harness(async () => {
      if (slow) await Bun.sleep(1_000);
      return ok();
    }, { timeoutMs: 150 });
    commitChanges(h.s.sqlite, [{ eventId: 'e1' }]);
    const started = performance.now();
    await h.worker.drain();
    expect(performance.now() - started).toBeLessThan(900);
    expect(deliveryRows(h.s.sqlite)[0]).toMatchObject({ status: 'pending', attempts: 1, last_status: null, last_error: 'timeout: no response within 150 ms' });
    slow = false;
    await h.nextRound();
    expect(deliveryRows(h.s.sqlite)[0]).toMatchObject({ status: 'delivered', attempts: 2 });
    // The receiver saw the timed-out attempt too: a duplicate, with the same webhook-id.
    expect(h.rx.received).toHaveLength(2);
    expect(new Set(h.rx.received.map((m) => m.id)).size).toBe(1);
  });

  test('a receiver that is down for a while and comes back gets everything; a success brings waiting retries forward', async () => {
    const h = await harness();
    await h.rx.stop();
    const seqs = commitChanges(h.s.sqlite, Array.from({ length: 6 }, (_, i) => ({ eventId: `e${i % 3}`, change: i < 3 ? 'created' : 'updated' })));
    await h.worker.drain();
    await h.nextRound();
    await h.nextRound(); // 3 attempts each so far (the three "updated" are blocked behind their events' "created")
    const rows = deliveryRows(h.s.sqlite);
    expect(rows.slice(0, 3).map((r) => r.attempts)).toEqual([3, 3, 3]);
    expect(rows.slice(3).map((r) => r.attempts)).toEqual([0, 0, 0]);
    expect(rows[0]!.last_error).toMatch(/^network error: /);
    h.rx.restart();
    await h.nextRound();
    expect(deliveryRows(h.s.sqlite).map((r) => r.status)).toEqual(Array(6).fill('delivered'));
    // Each exactly once (none of the failed attempts reached it); across events the order may vary.
    expect(h.rx.received.map((m) => m.id).sort()).toEqual(seqs.map((q) => `msg_${h.endpointId}_${q}`).sort());
    const created = h.rx.received.findIndex((m) => bodyOf(m).data.id === 'e0');
    const updated = h.rx.received.findLastIndex((m) => bodyOf(m).data.id === 'e0');
    expect(bodyOf(h.rx.received[created]!).type).toBe('traffic_event.created');
    expect(bodyOf(h.rx.received[updated]!).type).toBe('traffic_event.updated');
    for (const m of h.rx.received) verify(h.secret, m);
  });

  test('refused at delivery time when the name now resolves to a private address (failure on the schedule)', async () => {
    const lookups: string[] = [];
    const h = await harness(ok, {
      allowPrivate: false,
      lookup: async (host) => {
        lookups.push(host);
        return [{ address: '10.0.0.5', family: 4 }];
      },
    });
    h.s.sqlite.query('UPDATE webhook_endpoints SET url = ? WHERE id = ?').run(`http://hooks.example.test:${h.rx.port}/hook`, h.endpointId);
    commitChanges(h.s.sqlite, [{ eventId: 'e1' }]);
    await h.worker.drain();
    expect(lookups).toEqual(['hooks.example.test']);
    expect(h.rx.received).toHaveLength(0);
    const [d] = deliveryRows(h.s.sqlite);
    expect(d).toMatchObject({ status: 'pending', attempts: 1, last_status: null });
    expect(d!.last_error).toBe('refused: hooks.example.test resolves to 10.0.0.5, not a public address: private (10.0.0.0/8) (WEBHOOK_ALLOW_PRIVATE=true allows it)');
    expect(d!.next_attempt_at - h.clock.now()).toBe(5_000);
  });

  test('refused at delivery time: the real localhost and a literal loopback address', async () => {
    const h = await harness(ok, { allowPrivate: false });
    h.s.sqlite.query('UPDATE webhook_endpoints SET url = ? WHERE id = ?').run(`http://localhost:${h.rx.port}/hook`, h.endpointId);
    commitChanges(h.s.sqlite, [{ eventId: 'e1' }]);
    await h.worker.drain();
    expect(deliveryRows(h.s.sqlite)[0]!.last_error).toMatch(/^refused: localhost resolves to (127\.0\.0\.1|::1)/);
    // The URL is read again at each refresh: a literal 127.0.0.1 is refused too.
    h.s.sqlite.query('UPDATE webhook_endpoints SET url = ? WHERE id = ?').run(h.rx.url, h.endpointId);
    await h.nextRound();
    expect(deliveryRows(h.s.sqlite)[0]!.last_error).toMatch(/^refused: 127\.0\.0\.1 is not a public address: loopback/);
    expect(h.rx.received).toHaveLength(0);
  });
});

describe('ordering', () => {
  test('a later change of an event waits for the earlier one; other events may overtake it', async () => {
    let failA = 2;
    // One at a time makes the interleaving exact.
    const h = await harness((m) => (bodyOf(m).data.id === 'A' && failA-- > 0 ? status(500) : ok()), { perEndpointConcurrency: 1 });
    commitChanges(h.s.sqlite, [
      { eventId: 'A', change: 'created' },
      { eventId: 'B', change: 'created' },
      { eventId: 'A', change: 'updated' },
      { eventId: 'B', change: 'updated' },
      { eventId: 'A', change: 'cleared' },
      { eventId: 'C', change: 'created' },
    ]);
    const seen = () => h.rx.received.map((m) => `${bodyOf(m).data.id}.${bodyOf(m).type.split('.')[1]}`);
    await h.worker.drain();
    // A.created fails; B and C overtake it; A's later changes are held back. B's success after a
    // failure brings A.created forward once (it fails again and keeps its schedule).
    expect(seen()).toEqual(['A.created', 'B.created', 'A.created', 'B.updated', 'C.created']);
    expect(deliveryRows(h.s.sqlite).filter((r) => r.status === 'pending').map((r) => [r.event_id, r.attempts])).toEqual([
      ['A', 2],
      ['A', 0],
      ['A', 0],
    ]);
    await h.nextRound(); // the 5-minute step: A.created, then A.updated, then A.cleared
    expect(seen().slice(5)).toEqual(['A.created', 'A.updated', 'A.cleared']);
    expect(deliveryRows(h.s.sqlite).every((r) => r.status === 'delivered')).toBe(true);
  });

  test('with concurrency, an event’s changes are still never in flight together', async () => {
    const inFlight = new Set<string>();
    let overlap = false;
    const h = await harness(async (m) => {
      const ev = bodyOf(m).data.id;
      if (inFlight.has(ev)) overlap = true;
      inFlight.add(ev);
      await Bun.sleep(5);
      inFlight.delete(ev);
      return m.n % 4 === 0 ? status(500) : ok();
    });
    commitChanges(h.s.sqlite, Array.from({ length: 40 }, (_, i) => ({ eventId: `e${i % 5}`, change: i < 5 ? 'created' : 'updated' })));
    await h.worker.drain();
    for (let i = 0; i < 12 && deliveryRows(h.s.sqlite).some((r) => r.status === 'pending'); i++) await h.nextRound();
    expect(overlap).toBe(false);
    expect(h.rx.okIds.size).toBe(40);
    // Per event, the 2xx receipts follow change order.
    const okOrder = new Map<string, number[]>();
    for (const m of h.rx.received) {
      if (!h.rx.okIds.has(m.id)) continue;
      const seq = Number(m.id.slice(m.id.lastIndexOf('_') + 1));
      const ev = bodyOf(m).data.id;
      if (!okOrder.has(ev)) okOrder.set(ev, []);
      const list = okOrder.get(ev)!;
      if (!list.includes(seq)) list.push(seq);
    }
    for (const list of okOrder.values()) expect(list).toEqual([...list].sort((a, b) => a - b));
  });

  test('per-endpoint concurrency bounds the attempts in flight', async () => {
    let inFlight = 0;
    let peak = 0;
    const h = await harness(
      async () => {
        peak = Math.max(peak, ++inFlight);
        await Bun.sleep(20);
        inFlight--;
        return ok();
      },
      { perEndpointConcurrency: 3 },
    );
    commitChanges(h.s.sqlite, Array.from({ length: 12 }, (_, i) => ({ eventId: `e${i}` })));
    await h.worker.drain();
    expect(peak).toBe(3);
    expect(h.rx.okIds.size).toBe(12);
  });
});

describe('durability', () => {
  test('restart in the middle of retries: the new worker continues the schedule; nothing lost, ids unchanged', async () => {
    let failing = true;
    const h = await harness(() => (failing ? status(500) : ok()));
    const seqs = commitChanges(h.s.sqlite, Array.from({ length: 5 }, (_, i) => ({ eventId: `e${i}` })));
    await h.worker.drain();
    await h.nextRound();
    expect(deliveryRows(h.s.sqlite).map((r) => r.attempts)).toEqual([2, 2, 2, 2, 2]);
    await h.worker.stop();
    failing = false;
    const second = h.restart();
    h.clock.advance(299_000);
    expect((await second.drain()).attempts).toBe(0); // the 5-minute step still holds
    h.clock.advance(1_000);
    await second.drain();
    expect(deliveryRows(h.s.sqlite).map((r) => [r.status, r.attempts])).toEqual(Array(5).fill(['delivered', 3]));
    const expected = seqs.map((q) => `msg_${h.endpointId}_${q}`);
    expect([...h.rx.okIds].sort()).toEqual([...expected].sort());
    expect(new Set(h.rx.received.map((m) => m.id))).toEqual(new Set(expected));
    for (const m of h.rx.received) verify(h.secret, m);
  });

  test('stop() waits for attempts in flight and records them', async () => {
    const h = await harness(async () => {
      await Bun.sleep(100);
      return ok();
    });
    commitChanges(h.s.sqlite, [{ eventId: 'e1' }, { eventId: 'e2' }]);
    h.worker.wake();
    await Bun.sleep(30);
    expect(h.worker.stats().inFlight).toBe(2);
    await h.worker.stop();
    expect(deliveryRows(h.s.sqlite).map((r) => r.status)).toEqual(['delivered', 'delivered']);
  });

  test('SQLITE_BUSY while recording: results stay in memory, nothing is re-sent, all written once the lock is free', async () => {
    const h = await harness();
    const other = openDatabase(h.s.path);
    cleanups.push(() => other.sqlite.close());
    commitChanges(h.s.sqlite, [{ eventId: 'e1' }, { eventId: 'e2' }]);
    await h.worker.drain();
    // The scanner holds the write lock (across event-loop turns) while new changes are committed elsewhere…
    commitChanges(h.s.sqlite, [{ eventId: 'e3' }]);
    other.sqlite.exec('BEGIN IMMEDIATE');
    const started = performance.now();
    const r = await h.worker.drain();
    expect(performance.now() - started).toBeLessThan(500);
    expect(r.attempts).toBe(0); // fan-out could not write either: e3 waits
    other.sqlite.exec('COMMIT');
    // …and once while results are waiting to be written.
    h.rx.behaviour = () => {
      if (!other.sqlite.inTransaction) other.sqlite.exec('BEGIN IMMEDIATE');
      return ok();
    };
    const r2 = await h.worker.drain();
    expect(r2).toEqual({ attempts: 1, unwritten: 1 });
    expect(deliveryRows(h.s.sqlite).map((d) => d.status)).toEqual(['delivered', 'delivered', 'pending']);
    h.clock.advance(10_000);
    expect((await h.worker.drain()).attempts).toBe(0); // delivered, only not yet written: not sent again
    other.sqlite.exec('COMMIT');
    expect(h.worker.flush()).toBe(true);
    expect(deliveryRows(h.s.sqlite).map((d) => d.status)).toEqual(['delivered', 'delivered', 'delivered']);
    expect(h.rx.received).toHaveLength(3);
  });
});

describe('filters', () => {
  test('only matching changes are delivered', async () => {
    const h = await harness(ok, {}, { types: ['jam', 'road_closure'], cities: [6] });
    commitChanges(h.s.sqlite, [
      { eventId: 'jam-ankara', type: 'jam', plate: 6 },
      { eventId: 'jam-istanbul', type: 'jam', plate: 34 },
      { eventId: 'accident-ankara', type: 'accident', plate: 6 },
      { eventId: 'closure-ankara', type: 'road_closure', plate: 6 },
    ]);
    await h.worker.drain();
    expect(h.rx.received.map((m) => bodyOf(m).data.id)).toEqual(['jam-ankara', 'closure-ankara']);
  });
});

describe('timers', () => {
  test('started, the worker picks up changes committed elsewhere on its tick, and purges old finished rows', async () => {
    const h = await harness(ok, { tickMs: 20, retentionMs: 60_000 });
    h.worker.start();
    commitChanges(h.s.sqlite, [{ eventId: 'e1' }, { eventId: 'e2' }]); // no wake(): another process committed
    for (let i = 0; i < 100 && deliveryRows(h.s.sqlite).filter((r) => r.status === 'delivered').length < 2; i++) await Bun.sleep(10);
    expect(h.rx.okIds.size).toBe(2);
    expect(deliveryRows(h.s.sqlite).map((r) => r.status)).toEqual(['delivered', 'delivered']);
    // An hour later the hourly purge deletes finished rows past the retention; pending ones stay.
    h.rx.behaviour = () => status(500);
    commitChanges(h.s.sqlite, [{ eventId: 'e3' }]);
    for (let i = 0; i < 100 && deliveryRows(h.s.sqlite).length < 3; i++) await Bun.sleep(10);
    h.clock.advance(3_600_000);
    for (let i = 0; i < 100 && deliveryRows(h.s.sqlite).length > 1; i++) await Bun.sleep(10);
    expect(deliveryRows(h.s.sqlite).map((r) => [r.event_id, r.status])).toEqual([['e3', 'pending']]);
  });
});

/**
 * At-least-once under crashes and chaos: a worker killed with SIGKILL while requests are in
 * flight, and a long run against flaky receivers with restarts, lost results and lock contention.
 * Everything is delivered, nothing is lost, and a message is only ever repeated with the same
 * webhook-id and the same bytes.
 */
import { afterEach, expect, test } from 'bun:test';
import { join } from 'node:path';
import { openDatabase, type OpenedDb } from '../../src/db/client.ts';
import { createWebhookWorker, type WebhookWorkerControl } from '../../src/webhooks/index.ts';
import { commitChanges, deliveryRows, manualClock, setup, startReceiver, subscribe, verify, type Received, type Receiver } from './helpers.ts';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()!();
});

function bodyOf(r: { body: string }) {
  return JSON.parse(r.body) as { type: string; data: { id: string } };
}

/** Same id ⇒ same bytes; per event, first 2xx receipts in change order. */
function checkReceipts(rx: Receiver, secret: string) {
  const bodies = new Map<string, string>();
  for (const m of rx.received) {
    verify(secret, m);
    const prev = bodies.get(m.id);
    if (prev !== undefined) expect(m.body).toBe(prev);
    bodies.set(m.id, m.body);
  }
  const firstOk = new Map<string, number[]>();
  const seen = new Set<string>();
  for (const m of rx.received) {
    if (!rx.okIds.has(m.id) || seen.has(m.id)) continue;
    seen.add(m.id);
    const ev = bodyOf(m).data.id;
    firstOk.set(ev, [...(firstOk.get(ev) ?? []), Number(m.id.slice(m.id.lastIndexOf('_') + 1))]);
  }
  for (const seqs of firstOk.values()) expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
}

test('a worker killed (SIGKILL) with requests in flight: the next one re-sends them with the same webhook-id', async () => {
  const s = setup();
  const held: (() => void)[] = [];
  let hold = true;
  const rx = startReceiver({
    behaviour: async () => {
      if (hold) await new Promise<void>((r) => held.push(r));
      return new Response(null, { status: 204 });
    },
  });
  cleanups.push(async () => {
    await rx.stop();
    s.cleanup();
  });
  const { secret } = await subscribe(s.sqlite, s.keyId, rx.url);
  const seqs = commitChanges(s.sqlite, [{ eventId: 'e1' }, { eventId: 'e2' }, { eventId: 'e3' }, { eventId: 'e4' }]);

  const proc = Bun.spawn(['bun', join(import.meta.dir, 'fixtures/worker-process.ts'), s.path], { stdout: 'pipe', stderr: 'inherit' });
  cleanups.push(() => void proc.kill(9));
  for (let i = 0; i < 200 && rx.received.length < 4; i++) await Bun.sleep(25);
  expect(rx.received).toHaveLength(4);
  proc.kill(9);
  await proc.exited;
  hold = false;
  for (const r of held) r();

  // The crashed attempts were never recorded: the rows are pending, due, and go again.
  expect(deliveryRows(s.sqlite).map((d) => [d.status, d.attempts])).toEqual(Array(4).fill(['pending', 0]));
  const conn = openDatabase(s.path, { busyTimeoutMs: 0 });
  cleanups.push(() => conn.sqlite.close());
  const w = createWebhookWorker({ db: conn.sqlite, allowPrivate: true });
  await w.drain();
  await w.stop();
  expect(deliveryRows(s.sqlite).map((d) => d.status)).toEqual(Array(4).fill('delivered'));
  const ids = seqs.map((q) => rx.received.find((m) => m.id.endsWith(`_${q}`))!.id);
  expect(rx.received.map((m) => m.id).sort()).toEqual([...ids, ...ids].sort());
  checkReceipts(rx, secret);
});

test('chaos: flaky receivers, restarts, a crash that loses results, lock contention — every change delivered', async () => {
  const s = setup();
  const clock = manualClock(Date.now());
  let rnd = 42;
  const random = () => ((rnd = (rnd * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
  // Fails about half the time: 500s, 429s with Retry-After, 503s, and answers too slow for the
  // timeout; never one message more than 4 times (so none is given up after its 8 attempts).
  const failures = new Map<string, number>();
  const flaky = async (m: Received) => {
    const f = failures.get(m.id) ?? 0;
    failures.set(m.id, f + 1);
    const r = f >= 4 ? 1 : random();
    if (r < 0.2) return new Response('boom', { status: 500 });
    if (r < 0.3) return new Response(null, { status: 429, headers: { 'retry-after': '30' } });
    if (r < 0.4) return new Response(null, { status: 503 });
    if (r < 0.45) {
      await Bun.sleep(150);
      return new Response(null, { status: 204 });
    }
    return new Response(null, { status: m.n % 2 === 0 ? 200 : 204 });
  };
  const rxs = [startReceiver({ clock: clock.now, behaviour: flaky }), startReceiver({ clock: clock.now, behaviour: flaky })];
  const subs = [await subscribe(s.sqlite, s.keyId, rxs[0]!.url, {}, clock.now()), await subscribe(s.sqlite, s.keyId, rxs[1]!.url, { types: ['jam', 'accident'] }, clock.now())];
  const conns: OpenedDb[] = [];
  const other = openDatabase(s.path);
  cleanups.push(async () => {
    for (const r of rxs) await r.stop();
    for (const c of conns) c.sqlite.close();
    other.sqlite.close();
    s.cleanup();
  });
  const newWorker = (): WebhookWorkerControl => {
    const conn = openDatabase(s.path, { busyTimeoutMs: 0 });
    conns.push(conn);
    return createWebhookWorker({ db: conn.sqlite, clock: clock.now, allowPrivate: true, timeoutMs: 60, random });
  };
  let worker = newWorker();
  const types = ['jam', 'accident', 'hazard', 'road_closure'] as const;
  let made = 0;
  let crashLost = 0;
  for (let round = 0; round < 60; round++) {
    if (round < 8) {
      // New changes each round: 10 events, each created, updated, cleared over time.
      commitChanges(
        s.sqlite,
        Array.from({ length: 6 }, () => {
          const i = made++;
          return { eventId: `ev${i % 10}`, type: types[i % 4], change: i < 10 ? ('created' as const) : ('updated' as const) };
        }),
        clock.now(),
      );
    }
    if (round === 3 || round === 9) {
      await worker.stop(); // graceful restart
      worker = newWorker();
    }
    if (round === 5) {
      // Crash that loses results: the lock is held so nothing is written, then the worker is dropped.
      rxs.forEach((rx) => (rx.behaviour = async (m) => {
        if (!other.sqlite.inTransaction) other.sqlite.exec('BEGIN IMMEDIATE');
        return flaky(m);
      }));
      const r = await worker.drain();
      expect(r.unwritten).toBeGreaterThan(0);
      crashLost = r.unwritten;
      conns[conns.length - 1]!.sqlite.close(); // the process is gone: its results with it
      other.sqlite.exec('COMMIT');
      rxs.forEach((rx) => (rx.behaviour = flaky));
      worker = newWorker();
    } else await worker.drain();
    if (round >= 8 && deliveryRows(s.sqlite).every((d) => d.status !== 'pending')) break;
    const next = s.sqlite.query<{ t: number | null }, [number]>("SELECT MIN(next_attempt_at) AS t FROM webhook_deliveries WHERE status = 'pending' AND next_attempt_at > ?").get(clock.now())!.t;
    clock.set(Math.max(clock.now() + 1000, next ?? 0));
  }
  await worker.stop();
  const rows = deliveryRows(s.sqlite);
  expect(rows.filter((d) => d.status !== 'delivered')).toEqual([]);
  // Endpoint 0 takes everything, endpoint 1 only jams and accidents.
  expect(rows.filter((d) => d.endpoint_id === subs[0]!.endpoint.id)).toHaveLength(48);
  expect(rows.filter((d) => d.endpoint_id === subs[1]!.endpoint.id)).toHaveLength(24);
  subs.forEach((sub, i) => {
    const expected = rows.filter((d) => d.endpoint_id === sub.endpoint.id).map((d) => d.msg_id).sort();
    expect([...rxs[i]!.okIds].sort()).toEqual(expected);
    expect(new Set(rxs[i]!.received.map((m) => m.id))).toEqual(new Set(expected));
    checkReceipts(rxs[i]!, sub.secret);
  });
  // There were failures, retries and duplicates along the way.
  expect(crashLost).toBeGreaterThan(0);
  const received = rxs[0]!.received.length + rxs[1]!.received.length;
  const okReceipts = rxs.flatMap((rx) => rx.received.filter((m) => rx.okIds.has(m.id)));
  expect(received).toBeGreaterThan(72 * 1.5);
  expect(new Set(okReceipts.map((m) => m.id)).size).toBe(72);
});

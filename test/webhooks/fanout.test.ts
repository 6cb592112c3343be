import { afterEach, describe, expect, test } from 'bun:test';
import { openDatabase } from '../../src/db/client.ts';
import { changeBody, fanOut, fanOutBatch, listSubscriptions, messageId, parseCities, parseTypes, removeEndpoint, WebhookInputError } from '../../src/webhooks/index.ts';
import { commitChanges, deliveryRows, endpointRow, insertKey, setup, subscribe, type Setup } from './helpers.ts';

let s: Setup;
afterEach(() => s?.cleanup());

describe('fan-out', () => {
  test('one delivery per change and matching endpoint; the body is the outbox payload, wrapped', async () => {
    s = setup();
    const { endpoint } = await subscribe(s.sqlite, s.keyId, 'http://127.0.0.1:9/hook');
    const at = Date.UTC(2026, 10, 21, 10, 0, 0, 123);
    const [seq] = commitChanges(s.sqlite, [{ eventId: 'evt_a', change: 'cleared', at }]);
    const r = await fanOut(s.sqlite, at + 1000);
    expect(r).toMatchObject({ changes: 1, deliveries: 1, busy: false });
    const row = s.sqlite.query<{ payload: string; msg_id: string; event_type: string; next_attempt_at: number; status: string }, []>('SELECT * FROM webhook_deliveries').get()!;
    const outbox = s.sqlite.query<{ payload: string }, []>('SELECT payload FROM event_changes').get()!;
    expect(row.msg_id).toBe(messageId(endpoint.id, seq!));
    expect(row.msg_id).toBe(`msg_${endpoint.id}_${seq}`);
    expect(row.event_type).toBe('traffic_event.cleared');
    expect(row.status).toBe('pending');
    expect(row.next_attempt_at).toBe(at + 1000);
    expect(row.payload).toBe(`{"type":"traffic_event.cleared","timestamp":"2026-11-21T10:00:00Z","data":${outbox.payload}}`);
    expect(row.payload).toBe(changeBody('cleared', at, outbox.payload));
    const parsed = JSON.parse(row.payload);
    expect(parsed.data).toEqual(JSON.parse(outbox.payload));
    expect(endpointRow(s.sqlite, endpoint.id).cursor_seq).toBe(seq!);
  });

  test('filters: types and cities, alone and together', async () => {
    s = setup();
    const all = (await subscribe(s.sqlite, s.keyId, 'http://127.0.0.1:9/all')).endpoint.id;
    const jams = (await subscribe(s.sqlite, s.keyId, 'http://127.0.0.1:9/jams', { types: ['jam'] })).endpoint.id;
    const cities = (await subscribe(s.sqlite, s.keyId, 'http://127.0.0.1:9/cities', { cities: [34, 6] })).endpoint.id;
    const both = (await subscribe(s.sqlite, s.keyId, 'http://127.0.0.1:9/both', { types: ['accident', 'road_closure'], cities: [35] })).endpoint.id;
    commitChanges(s.sqlite, [
      { eventId: 'e1', type: 'jam', plate: 34 },
      { eventId: 'e2', type: 'accident', plate: 35 },
      { eventId: 'e3', type: 'road_closure', plate: 6 },
      { eventId: 'e4', type: 'hazard', plate: 35 },
      { eventId: 'e1', type: 'jam', plate: 34, change: 'cleared' },
      { eventId: 'e5', type: 'road_closure', plate: 35 },
    ]);
    await fanOut(s.sqlite, Date.now());
    const events = (id: string) => deliveryRows(s.sqlite, id).map((r) => r.event_id);
    expect(events(all)).toEqual(['e1', 'e2', 'e3', 'e4', 'e1', 'e5']);
    expect(events(jams)).toEqual(['e1', 'e1']);
    expect(events(cities)).toEqual(['e1', 'e3', 'e1']);
    expect(events(both)).toEqual(['e2', 'e5']);
    // Every endpoint's cursor moved past every change, matched or not.
    const last = s.sqlite.query<{ m: number }, []>('SELECT MAX(seq) AS m FROM event_changes').get()!.m;
    for (const id of [all, jams, cities, both]) expect(endpointRow(s.sqlite, id).cursor_seq).toBe(last);
  });

  test('a new endpoint receives only changes committed after it was added', async () => {
    s = setup();
    commitChanges(s.sqlite, [{ eventId: 'old1' }, { eventId: 'old2' }]);
    const { endpoint } = await subscribe(s.sqlite, s.keyId, 'http://127.0.0.1:9/hook');
    commitChanges(s.sqlite, [{ eventId: 'new1' }]);
    await fanOut(s.sqlite, Date.now());
    expect(deliveryRows(s.sqlite, endpoint.id).map((r) => r.event_id)).toEqual(['new1']);
  });

  test('fan-out is exactly once: running it again writes nothing; disabled endpoints get nothing', async () => {
    s = setup();
    const a = (await subscribe(s.sqlite, s.keyId, 'http://127.0.0.1:9/a')).endpoint.id;
    const b = (await subscribe(s.sqlite, s.keyId, 'http://127.0.0.1:9/b')).endpoint.id;
    s.sqlite.query("UPDATE webhook_endpoints SET status = 'disabled', disabled_reason = 'test' WHERE id = ?").run(b);
    commitChanges(s.sqlite, Array.from({ length: 30 }, (_, i) => ({ eventId: `e${i}` })));
    // Small transactions: 30 changes in batches of 7.
    const r = await fanOut(s.sqlite, Date.now(), { maxRowsPerTx: 7 });
    expect(r.deliveries).toBe(30);
    expect((await fanOut(s.sqlite, Date.now())).deliveries).toBe(0);
    expect(deliveryRows(s.sqlite, a)).toHaveLength(30);
    expect(deliveryRows(s.sqlite, b)).toHaveLength(0);
  });

  test('another connection holding the write lock: busy, nothing written, nothing lost', async () => {
    s = setup();
    const { endpoint } = await subscribe(s.sqlite, s.keyId, 'http://127.0.0.1:9/a');
    commitChanges(s.sqlite, [{ eventId: 'e1' }, { eventId: 'e2' }]);
    const worker = openDatabase(s.path, { busyTimeoutMs: 0 });
    s.sqlite.exec('BEGIN IMMEDIATE');
    const started = performance.now();
    const r = fanOutBatch(worker.sqlite, Date.now());
    expect(performance.now() - started).toBeLessThan(50); // no synchronous wait
    expect(r.busy).toBe(true);
    s.sqlite.exec('COMMIT');
    expect((await fanOut(worker.sqlite, Date.now())).deliveries).toBe(2);
    expect(deliveryRows(s.sqlite, endpoint.id)).toHaveLength(2);
    worker.sqlite.close();
  });
});

describe('subscriptions', () => {
  test('filters parse any province spelling and the four types; unknown ones are named', () => {
    expect(parseTypes('jam, accident,jam')).toEqual(['accident', 'jam']);
    expect(() => parseTypes('jam,crash')).toThrow("unknown event type 'crash'");
    expect(parseCities('İstanbul,ankara,06,Antep, izmir')).toEqual([6, 27, 34, 35]);
    expect(() => parseCities('istanbul,Istambul')).toThrow(WebhookInputError);
    expect(() => parseCities('istanbul,Istambul')).toThrow("unknown city 'Istambul'");
  });

  test('listSubscriptions: the key’s endpoints with stats, never the secret', async () => {
    s = setup();
    const other = insertKey(s.sqlite);
    const created = Date.UTC(2026, 10, 21, 10, 0, 0);
    const a = await subscribe(s.sqlite, s.keyId, 'http://127.0.0.1:9/a', { types: ['jam'], cities: [34, 6] }, created);
    await subscribe(s.sqlite, other, 'http://127.0.0.1:9/other');
    commitChanges(s.sqlite, [{ eventId: 'e1', type: 'jam' }, { eventId: 'e2', type: 'jam' }, { eventId: 'e3', type: 'jam' }]);
    await fanOut(s.sqlite, Date.now());
    const ids = deliveryRows(s.sqlite, a.endpoint.id).map((r) => r.id);
    s.sqlite.query("UPDATE webhook_deliveries SET status = 'delivered' WHERE id = ?").run(ids[0]!);
    s.sqlite.query("UPDATE webhook_deliveries SET status = 'failed' WHERE id = ?").run(ids[1]!);
    s.sqlite.query('UPDATE webhook_endpoints SET last_success_at = ?, consecutive_failures = 2, failing_since = ? WHERE id = ?').run(created + 1500, created + 60_000, a.endpoint.id);
    const views = listSubscriptions(s.sqlite, s.keyId);
    expect(views).toEqual([
      {
        id: a.endpoint.id,
        url: 'http://127.0.0.1:9/a',
        filters: { types: ['jam'], cities: [{ slug: 'ankara', name: 'Ankara', plate: 6 }, { slug: 'istanbul', name: 'İstanbul', plate: 34 }] },
        status: 'active',
        disabled_reason: null,
        disabled_at: null,
        created_at: '2026-11-21T10:00:00Z',
        last_success_at: '2026-11-21T10:00:01Z',
        last_failure_at: null,
        consecutive_failures: 2,
        failing_since: '2026-11-21T10:01:00Z',
        pending_deliveries: 1,
        delivered_count: 1,
        failed_count: 1,
      },
    ]);
    expect(JSON.stringify(views)).not.toContain('whsec_');
    expect(listSubscriptions(s.sqlite, 'key_nobody')).toEqual([]);
  });

  test('remove deletes the endpoint, its secret and its deliveries', async () => {
    s = setup();
    const a = await subscribe(s.sqlite, s.keyId, 'http://127.0.0.1:9/a');
    commitChanges(s.sqlite, [{ eventId: 'e1' }]);
    await fanOut(s.sqlite, Date.now());
    expect(removeEndpoint(s.sqlite, a.endpoint.id, Date.now())).toBe(true);
    expect(removeEndpoint(s.sqlite, a.endpoint.id, Date.now())).toBe(false);
    expect(deliveryRows(s.sqlite)).toHaveLength(0);
    expect(s.sqlite.query('SELECT COUNT(*) AS n FROM webhook_endpoints').get()).toEqual({ n: 0 });
  });
});

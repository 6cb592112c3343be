import { afterAll, beforeAll, expect, test } from 'bun:test';
import { EventSource } from 'eventsource';
import { eventChanges, type EventRow } from '../../src/db/schema/index.ts';
import type { ChangeType } from '../../src/domain/event.ts';
import { KeyStore } from '../../src/keys/store.ts';
import { toApiEvent } from '../../src/read-model/event-json.ts';
import { eventRow } from '../helpers/factories.ts';
import { limitsApp, type LimitsTestApp } from '../limits/helpers.ts';

// A real server on port 0, the real limits gate, real keys, and the npm `eventsource` client.
let t: LimitsTestApp;
let base: string;
let enterprise: string;
let enterprise2: string;
let free: string;

beforeAll(async () => {
  t = await limitsApp({ rate: 100_000, events: 0, socketPeer: true });
  t.app.listen({ port: 0, hostname: '127.0.0.1' });
  base = `http://127.0.0.1:${t.app.server!.port}`;
  const keys = new KeyStore(t.db.sqlite);
  enterprise = keys.create({ plan: 'enterprise', name: 'a', now: t.clock.now }).key;
  enterprise2 = keys.create({ plan: 'enterprise', name: 'b', now: t.clock.now }).key;
  free = keys.create({ plan: 'free', name: 'c', now: t.clock.now }).key;
});
afterAll(async () => {
  await t.app.stop(true);
  t.cleanup();
});

/** Writes a change to the outbox as a scan would, then lets the feed pick it up. */
function commit(change: ChangeType, over: Parameters<typeof eventRow>[0] = {}): string {
  const ev = toApiEvent(eventRow(over) as EventRow);
  t.db.db.insert(eventChanges).values({ eventId: ev.id, change, at: Date.now(), scanId: 1, payload: JSON.stringify(ev) }).run();
  t.feed.poll();
  return ev.id;
}

interface Received {
  id: string;
  type: string;
  data: { id: string; city: { plate: number }; type: string };
}

function open(query: string, key: string): { es: EventSource; got: Received[]; opened: Promise<void> } {
  const got: Received[] = [];
  const es = new EventSource(`${base}/api/v1/events/stream${query}`, {
    fetch: (input, init) => fetch(input, { ...init, headers: { ...init?.headers, authorization: `Bearer ${key}` } }),
  });
  for (const type of ['traffic_event.created', 'traffic_event.updated', 'traffic_event.cleared']) {
    es.addEventListener(type, (e) => got.push({ id: e.lastEventId, type: e.type, data: JSON.parse(e.data) }));
  }
  const opened = new Promise<void>((resolve, reject) => {
    es.onopen = () => resolve();
    es.onerror = (e) => reject(new Error(`stream error: ${JSON.stringify(e)}`));
  });
  return { es, got, opened };
}

async function until(cond: () => boolean, ms = 3000): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error('timed out');
    await Bun.sleep(10);
  }
}

test('Free and anonymous callers get 403 plan_required naming the stream', async () => {
  for (const headers of [{}, { authorization: `Bearer ${free}` }] as Record<string, string>[]) {
    const r = await fetch(`${base}/api/v1/events/stream`, { headers });
    expect(r.status).toBe(403);
    const body = await r.json();
    expect(body.code).toBe('plan_required');
    expect(body.feature).toBe('stream');
  }
});

test('an EventSource receives one message per change, filtered, with id/event/data', async () => {
  const { es, got, opened } = open('?city=ankara&type=jam', enterprise);
  await opened;
  const a = commit('created', { plate: 6, type: 'jam' });
  commit('created', { plate: 34, type: 'jam' }); // another city: filtered out
  commit('created', { plate: 6, type: 'accident' }); // another type: filtered out
  commit('updated', { id: a, plate: 6, type: 'jam' });
  commit('cleared', { id: a, plate: 6, type: 'jam' });
  await until(() => got.length >= 3);
  es.close();
  expect(got.map((m) => m.type)).toEqual(['traffic_event.created', 'traffic_event.updated', 'traffic_event.cleared']);
  expect(got.every((m) => m.data.id === a && m.data.city.plate === 6)).toBe(true);
  const ids = got.map((m) => Number(m.id));
  expect(ids).toEqual([...ids].sort((x, y) => x - y));
});

test('after a dropped connection the client resumes from Last-Event-ID and misses nothing', async () => {
  const { es, got, opened } = open('', enterprise);
  await opened;
  const first = commit('created');
  await until(() => got.length === 1);
  // The server ends every stream (as at a restart); changes land while the client is away.
  t.streams.closeAll();
  const missed = [commit('created'), commit('created')];
  await until(() => got.length === 3, 8000);
  const live = commit('created');
  await until(() => got.length === 4);
  es.close();
  expect(got.map((m) => m.data.id)).toEqual([first, ...missed, live]);
  expect(new Set(got.map((m) => m.id)).size).toBe(4);
}, 15_000);

test('heartbeats, the SSE content type, and no body cut by an idle timeout', async () => {
  const ctrl = new AbortController();
  const r = await fetch(`${base}/api/v1/events/stream`, { headers: { authorization: `Bearer ${enterprise}` }, signal: ctrl.signal });
  expect(r.status).toBe(200);
  expect(r.headers.get('content-type')).toStartWith('text/event-stream');
  expect(r.headers.get('cache-control')).toBe('no-cache');
  expect(r.headers.get('x-ratelimit-limit')).not.toBeNull();
  const reader = r.body!.getReader();
  const dec = new TextDecoder();
  let text = dec.decode((await reader.read()).value);
  expect(text).toStartWith('retry: ');
  t.streams.ping();
  while (!text.includes(': ping\n\n')) text += dec.decode((await reader.read()).value);
  ctrl.abort();
});

test('HEAD answers the stream\'s headers at once, with or without a trailing slash, and opens no stream', async () => {
  await until(() => t.streams.size === 0);
  for (const path of ['/api/v1/events/stream', '/api/v1/events/stream/']) {
    const r = await fetch(`${base}${path}`, { method: 'HEAD', headers: { authorization: `Bearer ${enterprise}` }, signal: AbortSignal.timeout(2000) });
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toStartWith('text/event-stream');
    expect(r.headers.get('cache-control')).toBe('no-cache');
    expect(t.streams.size).toBe(0);
  }
  // In-process too (app.handle has no Bun route to drop the body for it).
  const inProcess = await Promise.race([
    t.request('/api/v1/events/stream', { method: 'HEAD', headers: { authorization: `Bearer ${enterprise}` } }),
    Bun.sleep(2000).then(() => null),
  ]);
  expect(inProcess?.status).toBe(200);
  // Its checks still apply: Free is refused.
  expect((await fetch(`${base}/api/v1/events/stream`, { method: 'HEAD', headers: { authorization: `Bearer ${free}` } })).status).toBe(403);
});

test('at most five concurrent streams per key; a sixth is 429, another key is unaffected', async () => {
  const ctrls = Array.from({ length: 5 }, () => new AbortController());
  const opened = await Promise.all(ctrls.map((c) => fetch(`${base}/api/v1/events/stream`, { headers: { authorization: `Bearer ${enterprise}` }, signal: c.signal })));
  expect(opened.map((r) => r.status)).toEqual([200, 200, 200, 200, 200]);
  const sixth = await fetch(`${base}/api/v1/events/stream`, { headers: { authorization: `Bearer ${enterprise}` } });
  expect(sixth.status).toBe(429);
  expect((await sixth.json()).code).toBe('rate_limited');
  const other = new AbortController();
  expect((await fetch(`${base}/api/v1/events/stream`, { headers: { authorization: `Bearer ${enterprise2}` }, signal: other.signal })).status).toBe(200);
  other.abort();
  ctrls[0]!.abort();
  await until(() => t.streams.size <= 4);
  const again = new AbortController();
  expect((await fetch(`${base}/api/v1/events/stream`, { headers: { authorization: `Bearer ${enterprise}` }, signal: again.signal })).status).toBe(200);
  again.abort();
  for (const c of ctrls) c.abort();
});

test('bad filters and a bad Last-Event-ID are 400; list-only parameters are unknown here', async () => {
  const h = { authorization: `Bearer ${enterprise}` };
  const bad = async (path: string, headers: Record<string, string> = h) => {
    const r = await fetch(`${base}${path}`, { headers });
    expect(r.status).toBe(400);
    return (await r.json()) as { code: string; invalid_params: { name: string }[] };
  };
  expect((await bad('/api/v1/events/stream?type=fog')).invalid_params[0]!.name).toBe('type');
  expect((await bad('/api/v1/events/stream?limit=5')).code).toBe('unknown_parameter');
  expect((await bad('/api/v1/events/stream', { ...h, 'last-event-id': 'abc' })).invalid_params[0]!.name).toBe('Last-Event-ID');
  expect((await fetch(`${base}/api/v1/events/stream?city=istambul`, { headers: h })).status).toBe(400);
});

test('revoking a key ends its open streams at the next heartbeat; other keys stream on', async () => {
  const keys = new KeyStore(t.db.sqlite);
  const doomed = keys.create({ plan: 'enterprise', name: 'doomed', now: t.clock.now });
  const read = async (key: string) => {
    const r = await fetch(`${base}/api/v1/events/stream`, { headers: { authorization: `Bearer ${key}` } });
    expect(r.status).toBe(200);
    return r.body!.getReader();
  };
  const gone = await read(doomed.key);
  const stays = await read(enterprise2);
  await gone.read();
  await stays.read();
  keys.revoke(doomed.record.id, t.clock.now);
  t.streams.ping();
  // The revoked key's stream ends; the other one gets the ping.
  let r = await gone.read();
  while (!r.done) r = await gone.read();
  expect(r.done).toBe(true);
  expect(new TextDecoder().decode((await stays.read()).value)).toContain(': ping');
  await stays.cancel();
});

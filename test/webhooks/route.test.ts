import { afterAll, beforeAll, expect, test } from 'bun:test';
import { KeyStore } from '../../src/keys/store.ts';
import { addEndpoint } from '../../src/webhooks/endpoints.ts';
import { limitsApp, type LimitsTestApp } from '../limits/helpers.ts';

let t: LimitsTestApp;
let mine: string;
let mineId: string;
let other: string;
let free: string;
let endpointId: string;
let secret: string;

beforeAll(async () => {
  t = await limitsApp({ rate: 100_000, events: 0 });
  const keys = new KeyStore(t.db.sqlite);
  const a = keys.create({ plan: 'enterprise', name: 'mine', now: t.clock.now });
  const b = keys.create({ plan: 'enterprise', name: 'other', now: t.clock.now });
  mine = a.key;
  mineId = a.record.id;
  other = b.key;
  free = keys.create({ plan: 'free', name: 'free', now: t.clock.now }).key;
  // Public-looking names resolved by an injected lookup: no DNS, no network.
  const lookup = async () => [{ address: '93.184.216.34', family: 4 }];
  const added = await addEndpoint(t.db.sqlite, { keyId: a.record.id, url: 'https://hooks.example.com/trafik', types: ['accident', 'road_closure'], cities: [34, 6] }, { now: t.clock.now, allowPrivate: false, lookup });
  endpointId = added.endpoint.id;
  secret = added.secret;
  await addEndpoint(t.db.sqlite, { keyId: b.record.id, url: 'https://other.example.com/hook' }, { now: t.clock.now, allowPrivate: false, lookup });
});
afterAll(() => t.cleanup());

const get = (key?: string) => t.request('/api/v1/webhooks', key ? { headers: { 'x-api-key': key } } : {});

test('Free callers get 403 plan_required naming webhooks', async () => {
  for (const key of [undefined, free]) {
    const r = await get(key);
    expect(r.status).toBe(403);
    expect((await r.json()).feature).toBe('webhooks');
  }
});

test("an Enterprise key sees its own subscriptions with filters and delivery state, never a secret", async () => {
  const r = await get(mine);
  expect(r.status).toBe(200);
  expect(r.headers.get('cache-control')).toBe('no-store');
  const text = await r.text();
  expect(text).not.toContain(secret);
  expect(text).not.toContain('whsec_');
  const body = JSON.parse(text);
  expect(body.data).toHaveLength(1);
  const s = body.data[0];
  expect(s.id).toBe(endpointId);
  expect(s.url).toBe('https://hooks.example.com/trafik');
  expect(s.filters.types).toEqual(['accident', 'road_closure']);
  expect(s.filters.cities.map((c: { slug: string }) => c.slug)).toEqual(['ankara', 'istanbul']);
  expect(s).toMatchObject({ status: 'active', disabled_reason: null, consecutive_failures: 0, pending_deliveries: 0, last_success_at: null });
  expect(s.created_at).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/);
});

test('another key sees only its own', async () => {
  const body = await (await get(other)).json();
  expect(body.data.map((s: { url: string }) => s.url)).toEqual(['https://other.example.com/hook']);
});

test('the list is read-only and takes no parameters', async () => {
  expect((await t.request('/api/v1/webhooks', { method: 'POST', headers: { 'x-api-key': mine } })).status).toBe(405);
  expect((await t.request('/api/v1/webhooks?url=x', { headers: { 'x-api-key': mine } })).status).toBe(400);
});

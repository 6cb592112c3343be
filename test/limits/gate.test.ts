import { afterEach, describe, expect, test } from 'bun:test';
import { Elysia } from 'elysia';
import { accessContext, isQuotaPath, limitsGate, queryKeyParam, requireEnterprise } from '../../src/http/plugins/limits.ts';
import { errorHandler } from '../../src/http/plugins/errors.ts';
import { ApiError, problemBody } from '../../src/http/problems.ts';
import { generateApiKey } from '../../src/keys/format.ts';
import { KeyStore } from '../../src/keys/store.ts';
import { Limits } from '../../src/limits/index.ts';
import { silentLogger } from '../../src/log.ts';
import { tempDb } from '../helpers/db.ts';
import { expectProblem } from '../helpers/http.ts';
import { expectRateHeaders, limitsApp, type LimitsTestApp } from './helpers.ts';

let t: LimitsTestApp | null = null;
afterEach(() => {
  t?.cleanup();
  t = null;
});

const IP = '192.0.2.1';

describe('rate-limit headers on every response', () => {
  test('200, 304, 400, 404 (route and city), 405, OPTIONS 204, 401, 403 and 429', async () => {
    t = await limitsApp({ rate: 20, quota: 3 });
    const seen = new Map<number, number>();
    const check = async (res: Response, status: number) => {
      expect(res.status).toBe(status);
      seen.set(status, expectRateHeaders(res, 20));
      await res.arrayBuffer();
    };
    const ok = await t.from(IP, '/api/v1/events');
    const etag = ok.headers.get('etag')!;
    await check(ok, 200);
    await check(await t.from(IP, '/api/v1/events', { headers: { 'if-none-match': etag } }), 304);
    await check(await t.from(IP, '/api/v1/events?limit=abc'), 400);
    await check(await t.from(IP, '/api/v1/nope'), 404);
    await check(await t.from(IP, '/api/v1/events/atlantis'), 404);
    await check(await t.from(IP, '/api/v1/events', { method: 'POST' }), 405);
    await check(await t.from(IP, '/api/v1/events', { method: 'OPTIONS' }), 204);
    await check(await t.from(IP, '/api/v1/events', { headers: { authorization: 'Bearer trk_live_nope' } }), 401);
    await check(await t.from(IP, '/api/v1/stats'), 200);
    await check(await t.from(IP, '/api/v1/stats'), 200);
    await check(await t.from(IP, '/api/v1/stats'), 403); // quota of 3 used up (events + 2 × stats)
    await check(await t.from(IP, '/api/v1/health'), 200);
    await check(await t.from(IP, '/api/v1/events', { method: 'HEAD' }), 403);
    // Every one of those 13 counted against the per-minute limit, errors included.
    expect(seen.get(403)).toBe(20 - 13);
    for (let i = 0; i < 7; i++) await (await t.from(IP, '/api/v1/health')).arrayBuffer();
    const limited = await t.from(IP, '/api/v1/health');
    await check(limited, 429);
    expect(seen.get(429)).toBe(0);
  });

  test('503 from health with the database closed still carries them', async () => {
    t = await limitsApp({ events: 0 });
    t.db.sqlite.close();
    const res = await t.from(IP, '/api/v1/health');
    expect(res.status).toBe(503);
    expect(expectRateHeaders(res)).toBe(59);
    expect(res.headers.get('x-quota-limit')).toBe('1000');
  });

  test('X-RateLimit-Reset is the end of the current wall-clock minute; t counts down to it', async () => {
    t = await limitsApp();
    t.clock.now = Date.parse('2026-11-21T10:00:42.300Z');
    const res = await t.from(IP, '/api/v1/health');
    expect(res.headers.get('x-ratelimit-reset')).toBe(String(Date.parse('2026-11-21T10:01:00Z') / 1000));
    expect(res.headers.get('ratelimit')).toBe('"ip-minute";r=59;t=18');
  });
});

describe('per-IP sliding window', () => {
  test('the 61st request in a window is 429 rate_limited with Retry-After: 60, and is not counted', async () => {
    t = await limitsApp({ events: 0 });
    for (let i = 0; i < 60; i++) {
      const r = await t.from(IP, '/api/v1/health');
      expect(r.status).toBe(200);
      expect(r.headers.get('x-ratelimit-remaining')).toBe(String(59 - i));
    }
    const res = await t.from(IP, '/api/v1/health');
    expect(res.headers.get('retry-after')).toBe('60');
    expect(res.headers.get('x-ratelimit-remaining')).toBe('0');
    await expectProblem(res, 429, 'rate_limited', '/api/v1/health');
    // Unknown routes and other methods are limited too (checked before routing).
    expect((await t.from(IP, '/nowhere')).status).toBe(429);
    expect((await t.from(IP, '/api/v1/events', { method: 'DELETE' })).status).toBe(429);
    // Other clients are not affected.
    expect((await t.from('192.0.2.2', '/api/v1/health')).status).toBe(200);
    // The window slides: 30 s into the next minute, ceil(60 × 0.5) = 30 are left. Had the
    // refusals counted, none would be.
    t.clock.now += 90_000;
    let ok = 0;
    for (let i = 0; i < 40; i++) if ((await t.from(IP, '/api/v1/health')).status === 200) ok++;
    expect(ok).toBe(30);
  });

  test('refusals in the same second share their headers but not their request id; the next second counts down', async () => {
    t = await limitsApp({ events: 0, rate: 1 });
    expect((await t.from(IP, '/api/v1/health')).status).toBe(200);
    const plain = (r: Response) => Object.fromEntries([...r.headers].filter(([k]) => k !== 'x-request-id' && k !== 'content-length'));
    const a = await t.from(IP, '/api/v1/events');
    const b = await t.from(IP, '/api/v1/stats', { headers: { 'x-request-id': 'client-chosen-id' } });
    const c = await t.from(IP, '/api/v1/health', { headers: { origin: 'https://app.example' } });
    for (const r of [a, b, c]) expect(r.status).toBe(429);
    const ids = [a, b, c].map((r) => r.headers.get('x-request-id'));
    expect(new Set(ids).size).toBe(3);
    expect(ids[1]).toBe('client-chosen-id');
    for (const r of [a, b, c]) expect((await r.clone().json()).request_id).toBe(r.headers.get('x-request-id'));
    expect(plain(b)).toEqual(plain(a));
    // With an Origin the CORS exposure comes along; without, it does not.
    expect(a.headers.get('access-control-expose-headers')).toBeNull();
    expect(c.headers.get('access-control-expose-headers')).toContain('Retry-After');
    expect(plain(c)).toEqual({ ...plain(a), 'access-control-expose-headers': c.headers.get('access-control-expose-headers')! });
    const t1 = /t=(\d+)$/.exec(a.headers.get('ratelimit')!)![1];
    t.clock.now += 1000;
    const d = await t.from(IP, '/api/v1/health');
    expect(d.status).toBe(429);
    expect(Number(/t=(\d+)$/.exec(d.headers.get('ratelimit')!)![1])).toBe(Number(t1) - 1);
    expectRateHeaders(d, 1);
  });

  test('IPv4-mapped peers share the IPv4 bucket; IPv6 peers share their /64', async () => {
    t = await limitsApp({ rate: 2, events: 0 });
    expect((await t.from('203.0.113.7', '/api/v1/health')).status).toBe(200);
    expect((await t.from('::ffff:203.0.113.7', '/api/v1/health')).status).toBe(200);
    expect((await t.from('203.0.113.7', '/api/v1/health')).status).toBe(429);
    expect((await t.from('2001:db8:1:2::1', '/api/v1/health')).status).toBe(200);
    expect((await t.from('2001:db8:1:2:ffff:eeee:dddd:cccc', '/api/v1/health')).status).toBe(200);
    expect((await t.from('2001:db8:1:2::abcd', '/api/v1/health')).status).toBe(429);
    expect((await t.from('2001:db8:1:3::1', '/api/v1/health')).status).toBe(200);
  });

  test('X-Forwarded-For is ignored without TRUST_PROXY', async () => {
    t = await limitsApp({ rate: 1, events: 0 });
    expect((await t.from(IP, '/api/v1/health', { headers: { 'x-forwarded-for': '198.51.100.1' } })).status).toBe(200);
    expect((await t.from(IP, '/api/v1/health', { headers: { 'x-forwarded-for': '198.51.100.2' } })).status).toBe(429);
  });

  test('with TRUST_PROXY the right-most untrusted hop is the client', async () => {
    t = await limitsApp({ rate: 1, events: 0, trustProxy: ['10.0.0.0/8'] });
    const via = (xff: string) => t!.from('10.0.0.1', '/api/v1/health', { headers: { 'x-forwarded-for': xff } });
    expect((await via('198.51.100.1')).status).toBe(200);
    expect((await via('6.6.6.6, 198.51.100.1')).status).toBe(429); // spoofed left part changes nothing
    expect((await via('198.51.100.1, 10.0.0.7')).status).toBe(429); // a second trusted hop is skipped
    expect((await via('198.51.100.2, 10.0.0.7')).status).toBe(200);
    // An untrusted peer's header is still ignored.
    expect((await t.from('192.0.2.9', '/api/v1/health', { headers: { 'x-forwarded-for': '198.51.100.3' } })).status).toBe(200);
    expect((await t.from('192.0.2.9', '/api/v1/health', { headers: { 'x-forwarded-for': '198.51.100.4' } })).status).toBe(429);
  });
});

test('the gate renders exactly the problem bodies problemBody would (members, order, escaping)', async () => {
  t = await limitsApp({ rate: 1, quota: 1 });
  await (await t.from(IP, '/api/v1/stats')).arrayBuffer();
  const reason = 'API keys are not accepted in the query string (URLs end up in logs); send it in `Authorization: Bearer <key>` or `X-API-Key`';
  const cases: [Response, ApiError, string][] = [
    [await t.from(IP, '/api/v1/stats?x="q"'), new ApiError('rate_limited', 'More than 1 requests in 60 seconds from this address. Retry after 60 seconds.'), '/api/v1/stats'],
    [
      await t.from('192.0.2.50', '/api/v1/events?a=1&%61pi_key=x'),
      new ApiError('invalid_parameter', `${reason}.`, { invalid_params: [{ name: '%61pi_key', reason }] }),
      '/api/v1/events',
    ],
    [
      await t.from('192.0.2.51', '/api/v1/%22q%22', { headers: { 'x-api-key': 'nope', 'x-request-id': 'client:id-1.2@x' } }),
      new ApiError('invalid_api_key', 'The API key is unknown, malformed or revoked.'),
      '/api/v1/%22q%22',
    ],
  ];
  for (const [res, err, instance] of cases) {
    const text = await res.text();
    const rid = res.headers.get('x-request-id')!;
    expect(text).toBe(JSON.stringify(problemBody(err, 'http://localhost', instance, rid)));
  }
  expect(cases[2]![0].headers.get('x-request-id')).toBe('client:id-1.2@x');
});

describe('API keys', () => {
  test('a key in the query string is refused with 400 on every route', async () => {
    t = await limitsApp();
    for (const path of [
      '/api/v1/events?key=trk_live_x',
      '/api/v1/events?limit=5&api_key=x',
      '/api/v1/events/istanbul?apikey=x',
      '/api/v1/stats?access_token=x',
      '/api/v1/health?token=x',
      '/api/v1/health?API_KEY=x',
      '/api/v1/health?%6Bey=x',
      '/swagger?key=x',
      '/no/such/route?token=1',
    ]) {
      const res = await t.from(IP, path);
      expectRateHeaders(res);
      const body = await expectProblem(res, 400, 'invalid_parameter');
      expect(body.detail).toContain('query string');
      expect(body.invalid_params).toHaveLength(1);
    }
  });

  test('queryKeyParam and isQuotaPath', () => {
    const u = (s: string) => `http://localhost${s}`;
    const q = (s: string) => queryKeyParam(u(s), u(s).indexOf('?'));
    expect(q('/x?limit=1&type=jam')).toBeNull();
    expect(q('/x?keyword=1&tokens=2&akey=3')).toBeNull();
    expect(q('/x?a=1&Token')).toBe('Token');
    expect(q('/x?api%5Fkey=1')).toBe('api%5Fkey');
    expect(isQuotaPath(u('/api/v1/events'))).toBe(true);
    expect(isQuotaPath(u('/api/v1/events?limit=1'))).toBe(true);
    expect(isQuotaPath(u('/api/v1/events/istanbul'))).toBe(true);
    expect(isQuotaPath(u('/api/v1/events/stream'))).toBe(true);
    expect(isQuotaPath(u('/api/v1/stats'))).toBe(true);
    expect(isQuotaPath(u('/api/v1/stats?top=3'))).toBe(true);
    expect(isQuotaPath(u('/api/v1/health'))).toBe(false);
    expect(isQuotaPath(u('/api/v1/eventsx'))).toBe(false);
    expect(isQuotaPath(u('/api/v1/statistics'))).toBe(false);
    expect(isQuotaPath(u('/swagger?x=/api/v1/events'))).toBe(false);
    expect(isQuotaPath('https://api.example.com/api/v1/events')).toBe(true);
  });

  test('Bearer and X-API-Key are accepted; bad keys are 401 invalid_api_key with WWW-Authenticate: Bearer', async () => {
    t = await limitsApp();
    const store = new KeyStore(t.db.sqlite);
    const { key } = store.create({ plan: 'free', name: 'app', now: t.clock.now });
    expect((await t.from(IP, '/api/v1/events', { headers: { authorization: `Bearer ${key}` } })).status).toBe(200);
    expect((await t.from(IP, '/api/v1/events', { headers: { authorization: `bearer  ${key}` } })).status).toBe(200);
    expect((await t.from(IP, '/api/v1/events', { headers: { 'x-api-key': key } })).status).toBe(200);
    expect((await t.from(IP, '/api/v1/events', { headers: { authorization: `Bearer ${key}`, 'x-api-key': key } })).status).toBe(200);

    const other = store.create({ plan: 'free', name: 'other', now: t.clock.now }).key;
    const cases: Record<string, string>[] = [
      { authorization: 'Bearer trk_live_short' },
      { authorization: `Bearer ${key.slice(0, -1)}${key.endsWith('0') ? '1' : '0'}` }, // checksum
      { authorization: `Bearer trk_live_${'A'.repeat(38)}` },
      { 'x-api-key': '' },
      { authorization: `Basic ${btoa(`${key}:`)}` },
      { authorization: key },
      { authorization: `Bearer ${key}`, 'x-api-key': other },
    ];
    for (const headers of cases) {
      const res = await t.from(IP, '/api/v1/health', { headers });
      expect(res.headers.get('www-authenticate')).toBe('Bearer');
      expectRateHeaders(res);
      await expectProblem(res, 401, 'invalid_api_key');
    }
    // A well-formed key that does not exist.
    const ghost = generateApiKey();
    await expectProblem(await t.from(IP, '/api/v1/health', { headers: { 'x-api-key': ghost } }), 401, 'invalid_api_key');
  });

  test('a revoked key is refused within the cache TTL (2 s)', async () => {
    t = await limitsApp();
    const store = new KeyStore(t.db.sqlite);
    const { key, record } = store.create({ plan: 'enterprise', name: 'partner', now: t.clock.now });
    const auth = { authorization: `Bearer ${key}` };
    expect((await t.from(IP, '/api/v1/events', { headers: auth })).status).toBe(200);
    store.revoke(record.id, t.clock.now);
    t.clock.now += 2000;
    await expectProblem(await t.from(IP, '/api/v1/events', { headers: auth }), 401, 'invalid_api_key');
  });

  test('last-used time is written behind, not per request', async () => {
    t = await limitsApp();
    const store = new KeyStore(t.db.sqlite);
    const { key, record } = store.create({ plan: 'free', name: 'app', now: t.clock.now });
    await t.from(IP, '/api/v1/health', { headers: { 'x-api-key': key } });
    expect(store.get(record.id)!.lastUsedAt).toBeNull();
    t.limits.flush();
    expect(store.get(record.id)!.lastUsedAt).toBe(t.clock.now);
  });
});

describe('plans and monthly quota', () => {
  const quotaOf = (r: Response) => ({
    limit: r.headers.get('x-quota-limit'),
    remaining: r.headers.get('x-quota-remaining'),
    reset: r.headers.get('x-quota-reset'),
  });

  test('Free without a key: exactly FREE_MONTHLY_QUOTA 2xx, then 403 quota_exceeded; the 403 is not counted', async () => {
    t = await limitsApp({ quota: 5 });
    const reset = String(Date.parse('2026-11-30T21:00:00Z') / 1000);
    for (let i = 0; i < 5; i++) {
      const r = await t.from(IP, i % 2 ? '/api/v1/stats' : '/api/v1/events');
      expect(r.status).toBe(200);
      expect(quotaOf(r)).toEqual({ limit: '5', remaining: String(4 - i), reset });
    }
    for (const path of ['/api/v1/events', '/api/v1/events/istanbul', '/api/v1/stats']) {
      const r = await t.from(IP, path);
      expect(quotaOf(r)).toEqual({ limit: '5', remaining: '0', reset });
      const body = await expectProblem(r, 403, 'quota_exceeded');
      expect(body.detail).toContain('2026-11-30T21:00:00Z');
    }
    // Health and the docs stay reachable; the quota belongs to /events* and /stats.
    const h = await t.from(IP, '/api/v1/health');
    expect(h.status).toBe(200);
    expect(quotaOf(h).remaining).toBe('0');
    t.limits.flush();
    expect(t.db.sqlite.query('SELECT subject, period, count FROM quota_usage').all()).toEqual([{ subject: `ip:${IP}`, period: '2026-11', count: 5 }]);
    // Another client has its own quota.
    expect((await t.from('192.0.2.77', '/api/v1/stats')).status).toBe(200);
  });

  test('1,000 requests pass, the 1,001st is 403 (the default quota)', async () => {
    t = await limitsApp({ rate: 1_000_000, quota: 1000 });
    for (let i = 0; i < 1000; i++) {
      const r = await t.from(IP, '/api/v1/stats');
      if (r.status !== 200) throw new Error(`request ${i + 1} answered ${r.status}`);
      await r.arrayBuffer();
    }
    const r = await t.from(IP, '/api/v1/stats');
    expect(quotaOf(r).remaining).toBe('0');
    await expectProblem(r, 403, 'quota_exceeded');
  });

  test('304s, errors and health are not counted; HEAD 200 is', async () => {
    t = await limitsApp({ quota: 100 });
    const first = await t.from(IP, '/api/v1/events');
    expect(quotaOf(first).remaining).toBe('99');
    const etag = first.headers.get('etag')!;
    const notModified = await t.from(IP, '/api/v1/events', { headers: { 'if-none-match': etag } });
    expect(notModified.status).toBe(304);
    for (const path of ['/api/v1/events?limit=0', '/api/v1/events?nope=1', '/api/v1/events/atlantis', '/api/v1/stats?top=999', '/api/v1/nope', '/api/v1/health', '/api/v1/health', '/swagger']) {
      const r = await t.from(IP, path);
      expect(r.status === 200 || r.status >= 400).toBe(true);
      await r.arrayBuffer();
    }
    expect((await t.from(IP, '/api/v1/stats', { method: 'POST' })).status).toBe(405);
    const head = await t.from(IP, '/api/v1/stats', { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(quotaOf(head).remaining).toBe('98');
    const last = await t.from(IP, '/api/v1/stats');
    expect(quotaOf(last).remaining).toBe('97');
    t.limits.flush();
    expect(t.db.sqlite.query('SELECT count FROM quota_usage').get()).toEqual({ count: 3 });
  });

  test('the month turns at midnight Istanbul time (2026-11-30T21:00:00Z is December)', async () => {
    t = await limitsApp({ quota: 2, now: Date.parse('2026-11-30T20:58:00Z') });
    expect((await t.from(IP, '/api/v1/stats')).status).toBe(200);
    expect((await t.from(IP, '/api/v1/stats')).status).toBe(200);
    t.clock.now = Date.parse('2026-11-30T20:59:59Z');
    expect((await t.from(IP, '/api/v1/stats')).status).toBe(403);
    t.clock.now = Date.parse('2026-11-30T21:00:00Z');
    const dec = await t.from(IP, '/api/v1/stats');
    expect(dec.status).toBe(200);
    expect(quotaOf(dec)).toEqual({ limit: '2', remaining: '1', reset: String(Date.parse('2026-12-31T21:00:00Z') / 1000) });
    t.limits.flush();
    expect(t.db.sqlite.query('SELECT period, count FROM quota_usage ORDER BY period').all()).toEqual([
      { period: '2026-11', count: 2 },
      { period: '2026-12', count: 1 },
    ]);
  });

  test('a Free key is counted per key, whatever the client address', async () => {
    t = await limitsApp({ quota: 3 });
    const store = new KeyStore(t.db.sqlite);
    const a = store.create({ plan: 'free', name: 'a', now: t.clock.now });
    const b = store.create({ plan: 'free', name: 'b', now: t.clock.now });
    const withKey = (ip: string, key: string) => t!.from(ip, '/api/v1/stats', { headers: { authorization: `Bearer ${key}` } });
    expect((await withKey('192.0.2.1', a.key)).status).toBe(200);
    expect((await withKey('192.0.2.2', a.key)).status).toBe(200);
    const third = await withKey('192.0.2.3', a.key);
    expect(quotaOf(third).remaining).toBe('0');
    expect((await withKey('192.0.2.4', a.key)).status).toBe(403);
    // Key b and the anonymous quota of those addresses are untouched.
    expect(quotaOf(await withKey('192.0.2.1', b.key)).remaining).toBe('2');
    expect(quotaOf(await t.from('192.0.2.1', '/api/v1/stats')).remaining).toBe('2');
    t.limits.flush();
    const rows = t.db.sqlite.query('SELECT subject, count FROM quota_usage').all() as { subject: string; count: number }[];
    expect(Object.fromEntries(rows.map((r) => [r.subject, r.count]))).toEqual({ 'ip:192.0.2.1': 1, [`key:${a.record.id}`]: 3, [`key:${b.record.id}`]: 1 });
  });

  test('Enterprise: no quota headers, never 403 quota_exceeded, still rate limited per IP', async () => {
    t = await limitsApp({ quota: 2, rate: 10 });
    const { key } = new KeyStore(t.db.sqlite).create({ plan: 'enterprise', name: 'partner', now: t.clock.now });
    for (let i = 0; i < 10; i++) {
      const r = await t.from(IP, '/api/v1/stats', { headers: { 'x-api-key': key } });
      expect(r.status).toBe(200);
      expect(r.headers.get('x-quota-limit')).toBeNull();
      expect(r.headers.get('x-quota-remaining')).toBeNull();
      expectRateHeaders(r, 10);
    }
    expect((await t.from(IP, '/api/v1/stats', { headers: { 'x-api-key': key } })).status).toBe(429);
    t.limits.flush();
    expect(t.db.sqlite.query('SELECT count(*) AS n FROM quota_usage').get()).toEqual({ n: 0 });
  });
});

describe('the plan reaches routes', () => {
  test('`access` from accessContext; requireEnterprise answers 403 plan_required on Free', async () => {
    const db = tempDb();
    const limits = new Limits({ sqlite: db.sqlite, rateLimitPerMinute: 60, freeMonthlyQuota: 10, trustProxy: [], clock: () => Date.now(), logger: silentLogger });
    const store = new KeyStore(db.sqlite);
    const ent = store.create({ plan: 'enterprise', name: 'e', now: Date.now() });
    const free = store.create({ plan: 'free', name: 'f', now: Date.now() });
    const routes = new Elysia()
      .use(accessContext)
      .get('/api/v1/whoami', ({ access }) => `${access.plan}:${access.keyId}`)
      .get('/api/v1/history', ({ access }) => {
        requireEnterprise(access, 'history', 'History is part of the Enterprise plan.');
        return 'ok';
      });
    const app = new Elysia()
      .use(errorHandler({ publicUrl: '', logger: silentLogger }))
      .use(limitsGate(limits, { publicUrl: '', clientIp: () => '192.0.2.1' }))
      .use(routes);
    const get = (path: string, key?: string) => app.handle(new Request(`http://localhost${path}`, key ? { headers: { authorization: `Bearer ${key}` } } : {}));
    expect(await (await get('/api/v1/whoami')).text()).toBe('free:null');
    expect(await (await get('/api/v1/whoami', free.key)).text()).toBe(`free:${free.record.id}`);
    expect(await (await get('/api/v1/whoami', ent.key)).text()).toBe(`enterprise:${ent.record.id}`);
    expect(await (await get('/api/v1/history', ent.key)).text()).toBe('ok');
    const denied = await get('/api/v1/history', free.key);
    expect(denied.status).toBe(403);
    expect(((await denied.json()) as { code: string; feature: string })).toMatchObject({ code: 'plan_required', feature: 'history' });
    // Without the gate, routes see anonymous Free.
    const bare = new Elysia().use(routes);
    expect(await (await bare.handle(new Request('http://localhost/api/v1/whoami'))).text()).toBe('free:null');
    db.cleanup();
  });
});

import { afterEach, expect, test } from 'bun:test';
import { expectRateHeaders, limitsApp, type LimitsTestApp } from './helpers.ts';

let t: LimitsTestApp | null = null;
afterEach(async () => {
  await t?.app.stop(true);
  t?.cleanup();
  t = null;
});

async function listen(o: Parameters<typeof limitsApp>[0] = {}, hostname = '127.0.0.1'): Promise<string> {
  t = await limitsApp({ ...o, socketPeer: true });
  t.app.listen({ port: 0, hostname });
  return `http://127.0.0.1:${t.app.server!.port}`;
}

test('exactly 60 of 1,000 concurrent requests from one address succeed; the rest are 429 with Retry-After: 60', async () => {
  const base = await listen({ events: 3 });
  const results = await Promise.all(
    Array.from({ length: 1000 }, async (_, i) => {
      const res = await fetch(`${base}${i % 2 ? '/api/v1/events' : '/api/v1/health'}`);
      await res.arrayBuffer();
      return res;
    }),
  );
  const ok = results.filter((r) => r.status === 200);
  const limited = results.filter((r) => r.status === 429);
  expect(ok).toHaveLength(60);
  expect(limited).toHaveLength(940);
  for (const r of limited) {
    expect(r.headers.get('retry-after')).toBe('60');
    expect(expectRateHeaders(r)).toBe(0);
  }
  expect(ok.map((r) => expectRateHeaders(r)).sort((a, b) => a - b)).toEqual(Array.from({ length: 60 }, (_, i) => i));
  // Nothing else about the server suffered: the peer's bucket is just full.
  expect(t!.limits.rate.peek('127.0.0.1', t!.clock.now)).toBe(0);
});

test('a spoofed X-Forwarded-For is ignored without TRUST_PROXY', async () => {
  const base = await listen({ rate: 2, events: 0 });
  const statuses = [];
  for (let i = 0; i < 4; i++) statuses.push((await fetch(`${base}/api/v1/health`, { headers: { 'x-forwarded-for': `198.51.100.${i}` } })).status);
  expect(statuses).toEqual([200, 200, 429, 429]);
});

test('with TRUST_PROXY the proxy’s X-Forwarded-For is honoured (right-most untrusted hop)', async () => {
  const base = await listen({ rate: 1, events: 0, trustProxy: ['127.0.0.1'] });
  const via = async (xff: string) => (await fetch(`${base}/api/v1/health`, { headers: { 'x-forwarded-for': xff } })).status;
  expect(await via('198.51.100.1')).toBe(200);
  expect(await via('198.51.100.2')).toBe(200);
  expect(await via('203.0.113.9, 198.51.100.1')).toBe(429); // left part is the client's word: ignored
  expect((await fetch(`${base}/api/v1/health`)).status).toBe(200); // the proxy itself
});

test('on a dual-stack socket the IPv4-mapped peer matches an IPv4 TRUST_PROXY entry', async () => {
  await listen({ rate: 1, events: 0, trustProxy: ['127.0.0.1'] }, '::');
  const base = `http://127.0.0.1:${t!.app.server!.port}`;
  expect((await fetch(`${base}/api/v1/health`, { headers: { 'x-forwarded-for': '198.51.100.1' } })).status).toBe(200);
  expect((await fetch(`${base}/api/v1/health`, { headers: { 'x-forwarded-for': '198.51.100.2' } })).status).toBe(200);
  expect((await fetch(`${base}/api/v1/health`, { headers: { 'x-forwarded-for': '198.51.100.1' } })).status).toBe(429);
});

import { expect } from 'bun:test';
import { limitsGate } from '../../src/http/plugins/limits.ts';
import { Limits } from '../../src/limits/index.ts';
import { silentLogger } from '../../src/log.ts';
import { testApp, type TestApp } from '../helpers/app.ts';
import { eventRow, insertEvents, insertScan } from '../helpers/factories.ts';

export interface LimitsTestApp extends TestApp {
  limits: Limits;
  /** A request from `ip` (the injected socket peer; default 192.0.2.1). */
  from(ip: string, path: string, init?: RequestInit): Promise<Response>;
}

/** The real app with the limits gate, a fake clock and an injected socket peer (`x-test-peer`). */
export async function limitsApp(
  o: { rate?: number; quota?: number; trustProxy?: string[]; now?: number; events?: number; /** Use the real socket peer (listening tests). */ socketPeer?: boolean } = {},
): Promise<LimitsTestApp> {
  let limits!: Limits;
  const t = await testApp({
    now: o.now,
    gate: ({ db, clock }) => {
      limits = new Limits({ sqlite: db.sqlite, rateLimitPerMinute: o.rate ?? 60, freeMonthlyQuota: o.quota ?? 1000, trustProxy: o.trustProxy ?? [], clock, logger: silentLogger });
      return limitsGate(limits, { publicUrl: '', clientIp: o.socketPeer ? undefined : (r) => r.headers.get('x-test-peer') ?? '192.0.2.1' });
    },
  });
  const n = o.events ?? 3;
  if (n > 0) {
    insertEvents(
      t.db.db,
      Array.from({ length: n }, () => eventRow({}, t.clock.now)),
    );
    insertScan(t.db.db, t.clock.now - 10_000);
    t.readModel.refresh();
  }
  return {
    ...t,
    limits,
    from(ip, path, init = {}) {
      const headers = new Headers(init.headers);
      headers.set('x-test-peer', ip);
      return t.request(path, { ...init, headers });
    },
  };
}

/** Asserts the five rate-limit headers of CONTRACT §4 and returns the remaining count. */
export function expectRateHeaders(res: Response, limit = 60): number {
  const h = res.headers;
  expect(h.get('x-ratelimit-limit')).toBe(String(limit));
  const remaining = h.get('x-ratelimit-remaining');
  expect(remaining).toMatch(/^\d+$/);
  expect(h.get('x-ratelimit-reset')).toMatch(/^\d{10}$/);
  expect(Number(h.get('x-ratelimit-reset')) % 60).toBe(0); // aligned to a wall-clock minute
  expect(h.get('ratelimit-policy')).toBe(`"ip-minute";q=${limit};w=60`);
  const m = /^"ip-minute";r=(\d+);t=(\d+)$/.exec(h.get('ratelimit') ?? '');
  expect(m).not.toBeNull();
  expect(m![1]).toBe(remaining!);
  expect(Number(m![2])).toBeGreaterThanOrEqual(1);
  expect(Number(m![2])).toBeLessThanOrEqual(60);
  return Number(remaining);
}

import { afterAll, beforeAll, expect, test } from 'bun:test';
import { isAsync } from 'elysia/compose';
import { limitsApp, type LimitsTestApp } from '../limits/helpers.ts';

// Elysia reads each hook's and handler's source to guess whether it may return a Promise (a
// `return f(` or `=> f(` anywhere, or the word async/await) and then awaits it; one such hook
// makes every request's handler async (~1.3 µs more per request on the events page). The hooks
// every request runs and the hot routes' handlers are written so Elysia sees them as synchronous.

let t: LimitsTestApp;
beforeAll(async () => {
  t = await limitsApp();
});
afterAll(() => t.cleanup());

type Container = { fn: Function };
type Route = { method: string; path: string; handler: Function };

test('every onRequest and global afterHandle hook is seen as synchronous', () => {
  const app = t.app as unknown as { event: { request?: Container[]; afterHandle?: Container[] } };
  const hooks = [...(app.event.request ?? []), ...(app.event.afterHandle ?? [])];
  expect(hooks.length).toBeGreaterThanOrEqual(4);
  expect(hooks.filter((h) => isAsync(h)).map((h) => h.fn.name)).toEqual([]);
});

test('the hot routes\' handlers are seen as synchronous, and so is the composed request handler', () => {
  const app = t.app as unknown as { router: { history: Route[] }; compile(): void; fetch: Function };
  const hot = app.router.history.filter((r) => r.method === 'GET' && ['/api/v1/events', '/api/v1/events/:city', '/api/v1/stats', '/api/v1/health'].includes(r.path));
  expect(hot).toHaveLength(4);
  expect(hot.filter((r) => isAsync(r.handler)).map((r) => r.path)).toEqual([]);
  app.compile();
  expect(String(app.fetch)).toStartWith('function');
});

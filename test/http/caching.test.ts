import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { eq } from 'drizzle-orm';
import { events } from '../../src/db/schema/index.ts';
import { testApp, type TestApp } from '../helpers/app.ts';
import { eventRow, insertEvents, insertScan } from '../helpers/factories.ts';
import { expectProblem } from '../helpers/http.ts';

// CONTRACT §5: strong ETag, Last-Modified = last successful scan, private max-age=30, and
// If-None-Match → 304 on /events* and /stats; /health and errors no-store.

let t: TestApp;
let scanAt: number;
const DATA_PATHS = ['/api/v1/events', '/api/v1/events?limit=2&type=jam,accident', '/api/v1/events/istanbul', '/api/v1/events?format=geojson', '/api/v1/stats', '/api/v1/stats?top=3'];

beforeAll(async () => {
  t = await testApp();
  const now = t.clock.now;
  insertEvents(t.db.db, [
    eventRow({ id: 'evt_c1', reportedAt: now - 1000 }, now),
    eventRow({ id: 'evt_c2', plate: 6, type: 'jam', reportedAt: now - 2000 }, now),
    eventRow({ id: 'evt_c3', plate: 35, type: 'hazard', reportedAt: now - 3000 }, now),
  ]);
  scanAt = now - 42_000;
  insertScan(t.db.db, scanAt - 60_000);
  insertScan(t.db.db, scanAt);
  // A later failed scan does not move Last-Modified.
  insertScan(t.db.db, now - 5_000, { status: 'failed', cellsOk: 0, cellsFailed: 220 });
  t.readModel.refresh();
});
afterAll(() => t.cleanup());

describe('validators and cache headers', () => {
  for (const path of DATA_PATHS) {
    test(path, async () => {
      const a = await t.request(path);
      const b = await t.request(path);
      expect(a.status).toBe(200);
      const etag = a.headers.get('etag');
      expect(etag).toMatch(/^"[\x21\x23-\x7e]+"$/); // strong: quoted, no W/
      expect(b.headers.get('etag')).toBe(etag!);
      expect(await b.text()).toBe(await a.text());
      expect(a.headers.get('last-modified')).toBe(new Date(scanAt).toUTCString());
      expect(a.headers.get('cache-control')).toBe('private, max-age=30');
    });
  }

  test('spellings of the same city share the page (same ETag)', async () => {
    const a = await t.request('/api/v1/events/istanbul');
    const b = await t.request('/api/v1/events/ISTANBUL');
    const c = await t.request('/api/v1/events/34');
    expect(b.headers.get('etag')).toBe(a.headers.get('etag')!);
    expect(c.headers.get('etag')).toBe(a.headers.get('etag')!);
  });

  test('different queries have different ETags', async () => {
    const a = await t.request('/api/v1/events?limit=1');
    const b = await t.request('/api/v1/events?limit=2');
    expect(a.headers.get('etag')).not.toBe(b.headers.get('etag'));
  });

  test('/health is no-store with no validators', async () => {
    const r = await t.request('/api/v1/health');
    expect(r.headers.get('cache-control')).toBe('no-store');
    expect(r.headers.get('etag')).toBeNull();
  });

  test('errors are no-store with no validators', async () => {
    for (const path of ['/api/v1/events?limit=0', '/api/v1/events/istambul', '/nope', '/api/v1/stats?top=0']) {
      const r = await t.request(path);
      expect(r.headers.get('etag')).toBeNull();
      expect(r.headers.get('last-modified')).toBeNull();
      await expectProblem(r, r.status, (await r.clone().json()).code);
    }
  });
});

describe('If-None-Match', () => {
  async function etagOf(path: string): Promise<string> {
    return (await t.request(path)).headers.get('etag')!;
  }

  for (const path of DATA_PATHS) {
    test(`${path}: exact, list, W/ and * → 304 with ETag and no body`, async () => {
      const etag = await etagOf(path);
      for (const inm of [etag, `"nope", ${etag}`, `${etag},"other"`, `W/${etag}`, '*']) {
        const r = await t.request(path, { headers: { 'if-none-match': inm } });
        expect({ inm, status: r.status }).toEqual({ inm, status: 304 });
        expect(r.headers.get('etag')).toBe(etag);
        expect(r.headers.get('cache-control')).toBe('private, max-age=30');
        expect(r.headers.get('last-modified')).toBe(new Date(scanAt).toUTCString());
        expect(r.headers.get('x-request-id')).toBeString();
        expect(r.headers.get('access-control-allow-origin')).toBe('*');
        expect(await r.text()).toBe('');
      }
    });
  }

  test('a non-matching tag → 200 with the body', async () => {
    for (const inm of ['"nope"', 'W/"nope"', '"x", "y"']) {
      const r = await t.request('/api/v1/events', { headers: { 'if-none-match': inm } });
      expect(r.status).toBe(200);
      expect((await r.json()).data).toHaveLength(3);
    }
  });

  test('a tag matching only without its quotes does not match', async () => {
    const etag = await etagOf('/api/v1/events');
    const r = await t.request('/api/v1/events', { headers: { 'if-none-match': etag.slice(1, -1) } });
    expect(r.status).toBe(200);
  });

  test('the ETag of one query does not validate another', async () => {
    const etag = await etagOf('/api/v1/events?limit=1');
    expect((await t.request('/api/v1/events?limit=2', { headers: { 'if-none-match': etag } })).status).toBe(200);
  });

  test('If-None-Match on an error is still the error', async () => {
    const r = await t.request('/api/v1/events?limit=0', { headers: { 'if-none-match': '*' } });
    await expectProblem(r, 400, 'invalid_parameter');
  });
});

describe('after data changes and a refresh', () => {
  test('ETag and Last-Modified change; the old ETag no longer validates', async () => {
    const t2 = await testApp();
    try {
      const now = t2.clock.now;
      insertEvents(t2.db.db, [eventRow({ id: 'evt_d1' }, now), eventRow({ id: 'evt_d2', plate: 6 }, now)]);
      insertScan(t2.db.db, now - 30_000);
      t2.readModel.refresh();
      const paths = ['/api/v1/events', '/api/v1/events/istanbul', '/api/v1/stats'];
      const before = await Promise.all(paths.map(async (p) => (await t2.request(p)).headers.get('etag')!));

      t2.clock.now += 90_000;
      t2.db.db.update(events).set({ severity: 'major', updatedAt: t2.clock.now - 1000, lastSeenAt: t2.clock.now - 1000 }).where(eq(events.id, 'evt_d1')).run();
      insertEvents(t2.db.db, [eventRow({ id: 'evt_d3', type: 'jam' }, t2.clock.now)]);
      insertScan(t2.db.db, t2.clock.now - 2_000);
      t2.readModel.refresh();

      for (const [i, p] of paths.entries()) {
        const r = await t2.request(p, { headers: { 'if-none-match': before[i]! } });
        expect({ p, status: r.status }).toEqual({ p, status: 200 });
        expect(r.headers.get('etag')).not.toBe(before[i]!);
        expect(r.headers.get('last-modified')).toBe(new Date(t2.clock.now - 2_000).toUTCString());
      }
      const body = await (await t2.request('/api/v1/events/istanbul')).json();
      expect(body.data.map((e: { id: string }) => e.id).sort()).toEqual(['evt_d1', 'evt_d3']);
      expect(body.meta.data_updated_at).toBe(new Date(t2.clock.now - 2_000).toISOString().replace('.000', ''));
    } finally {
      t2.cleanup();
    }
  });

  test('before any scan Last-Modified is still a valid date', async () => {
    const t3 = await testApp();
    try {
      const r = await t3.request('/api/v1/events');
      expect(r.status).toBe(200);
      const lm = r.headers.get('last-modified');
      expect(lm).toBeString();
      expect(Number.isNaN(Date.parse(lm!))).toBe(false);
      expect((await r.json()).meta.data_updated_at).toBeNull();
    } finally {
      t3.cleanup();
    }
  });
});

import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { KeyStore } from '../../src/keys/store.ts';
import { eventRow, insertEvents, insertScan } from '../helpers/factories.ts';
import { limitsApp, type LimitsTestApp } from '../limits/helpers.ts';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
let t: LimitsTestApp;
let enterprise: string;
let free: string;
let now: number;

// A timeline over ten days: events seen at different times, some cleared, in three provinces.
const timeline = (n: number) => [
  // active now, seen in the 24-hour view
  eventRow({ id: 'evt_now_ist_acc', plate: 34, type: 'accident', severity: 'major', reportedAt: n - 2 * HOUR, firstSeenAt: n - 2 * HOUR, lastSeenAt: n - 60_000, updatedAt: n - 2 * HOUR }, n),
  eventRow({ id: 'evt_now_ank_jam', plate: 6, type: 'jam', severity: 'minor', reportedAt: n - 3 * HOUR, firstSeenAt: n - 3 * HOUR, lastSeenAt: n - 60_000, updatedAt: n - HOUR }, n),
  // cleared yesterday evening
  eventRow({ id: 'evt_clr_ist_haz', plate: 34, type: 'hazard', status: 'cleared', reportedAt: n - 30 * HOUR, firstSeenAt: n - 30 * HOUR, lastSeenAt: n - 20 * HOUR, updatedAt: n - 20 * HOUR + 180_000, clearedAt: n - 20 * HOUR + 180_000 }, n),
  // cleared three days ago
  eventRow({ id: 'evt_clr_izm_clo', plate: 35, type: 'road_closure', severity: 'major', status: 'cleared', reportedAt: n - 4 * DAY, firstSeenAt: n - 4 * DAY, lastSeenAt: n - 3 * DAY, updatedAt: n - 3 * DAY, clearedAt: n - 3 * DAY }, n),
  // a long roadworks closure: first seen nine days ago, still active
  eventRow({ id: 'evt_long_ank_clo', plate: 6, type: 'road_closure', severity: 'major', reportedAt: n - 9 * DAY, firstSeenAt: n - 9 * DAY, lastSeenAt: n - 60_000, updatedAt: n - 9 * DAY }, n),
];

beforeAll(async () => {
  t = await limitsApp({ rate: 100_000, events: 0 });
  now = t.clock.now;
  insertEvents(t.db.db, timeline(now));
  insertScan(t.db.db, now - 30_000);
  t.readModel.refresh();
  const keys = new KeyStore(t.db.sqlite);
  enterprise = keys.create({ plan: 'enterprise', name: 'ent', now }).key;
  free = keys.create({ plan: 'free', name: 'free', now }).key;
});
afterAll(() => t.cleanup());

const get = (path: string, key?: string) => t.request(path, key ? { headers: { authorization: `Bearer ${key}` } } : {});
const ids = async (r: Response) => ((await r.json()) as { data: { id: string }[] }).data.map((e) => e.id).sort();
const at = (ms: number) => new Date(ms).toISOString();

describe('plan gating', () => {
  for (const q of ['status=all', 'status=cleared', `from=${at(Date.parse('2026-11-20T00:00:00Z'))}`, `to=${at(Date.parse('2026-11-21T00:00:00Z'))}`]) {
    test(`Free (no key and a Free key): ${q} → 403 plan_required naming history`, async () => {
      for (const key of [undefined, free]) {
        const r = await get(`/api/v1/events?${q}`, key);
        expect(r.status).toBe(403);
        const body = await r.json();
        expect(body.code).toBe('plan_required');
        expect(body.feature).toBe('history');
        expect(r.headers.get('content-type')).toBe('application/problem+json');
      }
    });
  }
  test('updated_since older than 24 h is history: 403 on Free, served on Enterprise', async () => {
    const since = at(now - 5 * DAY);
    expect((await get(`/api/v1/events?updated_since=${since}`)).status).toBe(403);
    expect((await get(`/api/v1/events?updated_since=${since}`, free)).status).toBe(403);
    const r = await get(`/api/v1/events?updated_since=${since}`, enterprise);
    expect(r.status).toBe(200);
    // Incremental sync over history includes the cleared ones updated since then.
    expect(await ids(r)).toEqual(['evt_clr_ist_haz', 'evt_clr_izm_clo', 'evt_now_ank_jam', 'evt_now_ist_acc']);
  });
  test('stats from/to is Enterprise only', async () => {
    expect((await get(`/api/v1/stats?from=${at(now - 2 * DAY)}`, free)).status).toBe(403);
    expect((await get(`/api/v1/stats?from=${at(now - 2 * DAY)}`, enterprise)).status).toBe(200);
  });
});

describe('Enterprise history', () => {
  test('status without a range covers the last 24 hours: active, cleared, all', async () => {
    expect(await ids(await get('/api/v1/events?status=active', enterprise))).toEqual(['evt_long_ank_clo', 'evt_now_ank_jam', 'evt_now_ist_acc']);
    expect(await ids(await get('/api/v1/events?status=cleared', enterprise))).toEqual(['evt_clr_ist_haz']);
    expect(await ids(await get('/api/v1/events?status=all', enterprise))).toEqual(['evt_clr_ist_haz', 'evt_long_ank_clo', 'evt_now_ank_jam', 'evt_now_ist_acc']);
  });
  test('from/to selects the events seen during the range', async () => {
    const r = await get(`/api/v1/events?status=all&from=${at(now - 5 * DAY)}&to=${at(now - 2 * DAY)}`, enterprise);
    expect(r.status).toBe(200);
    const body = await r.json();
    expect(body.data.map((e: { id: string }) => e.id).sort()).toEqual(['evt_clr_izm_clo', 'evt_long_ank_clo']);
    expect(body.meta.history).toEqual({ status: 'all', from: at(now - 5 * DAY).replace('.000', ''), to: at(now - 2 * DAY).replace('.000', '') });
    expect(body.data.find((e: { id: string }) => e.id === 'evt_clr_izm_clo').status).toBe('cleared');
  });
  test('the list filters apply to history too: city path, type, severity, bbox, near', async () => {
    const range = `status=all&from=${at(now - 10 * DAY)}`;
    expect(await ids(await get(`/api/v1/events/ankara?${range}`, enterprise))).toEqual(['evt_long_ank_clo', 'evt_now_ank_jam']);
    expect(await ids(await get(`/api/v1/events?${range}&type=road_closure`, enterprise))).toEqual(['evt_clr_izm_clo', 'evt_long_ank_clo']);
    expect(await ids(await get(`/api/v1/events?${range}&severity=major&city=34`, enterprise))).toEqual(['evt_now_ist_acc']);
    // The factory puts every event at one point in İstanbul; a box or circle elsewhere finds none.
    expect(await ids(await get(`/api/v1/events?${range}&bbox=28.9,40.9,29.1,41.1`, enterprise))).toHaveLength(5);
    expect(await ids(await get(`/api/v1/events?${range}&bbox=32.0,39.0,33.0,40.0`, enterprise))).toEqual([]);
    expect(await ids(await get(`/api/v1/events?${range}&near=41.0082,28.9784&radius_km=1`, enterprise))).toHaveLength(5);
    expect(await ids(await get(`/api/v1/events?${range}&near=41.1,28.9784&radius_km=5`, enterprise))).toEqual([]);
  });
  test('cursor pagination over history walks every event once, newest reported first', async () => {
    const seen: string[] = [];
    let path: string | null = `/api/v1/events?status=all&from=${at(now - 10 * DAY)}&limit=2`;
    let pages = 0;
    while (path !== null) {
      const body = (await (await get(path, enterprise)).json()) as { data: { id: string; reported_at: string }[]; pagination: { next: string | null; total: number } };
      expect(body.pagination.total).toBe(5);
      seen.push(...body.data.map((e) => e.id));
      path = body.pagination.next;
      pages++;
    }
    expect(pages).toBe(3);
    expect(seen).toEqual(['evt_now_ist_acc', 'evt_now_ank_jam', 'evt_clr_ist_haz', 'evt_clr_izm_clo', 'evt_long_ank_clo']);
  });
  test('GeoJSON and ETag/304 work on history pages', async () => {
    const path = `/api/v1/events?status=all&from=${at(now - 10 * DAY)}&format=geojson`;
    const r = await get(path, enterprise);
    expect(r.headers.get('content-type')).toStartWith('application/geo+json');
    const fc = await r.json();
    expect(fc.type).toBe('FeatureCollection');
    expect(fc.features).toHaveLength(5);
    const again = await t.request(path, { headers: { authorization: `Bearer ${enterprise}`, 'if-none-match': r.headers.get('etag')! } });
    expect(again.status).toBe(304);
  });
  test('bad ranges are 400 naming the parameter', async () => {
    const cases: [string, string][] = [
      [`from=${at(now - DAY)}&to=${at(now - 2 * DAY)}`, 'from'],
      [`from=${at(now - 91 * DAY)}`, 'from'],
      [`to=${at(now + DAY)}`, 'to'],
      ['from=2026-02-30T00:00:00Z', 'from'],
      ['from=yesterday', 'from'],
      ['status=archived', 'status'],
    ];
    for (const [q, name] of cases) {
      const r = await get(`/api/v1/events?${q}`, enterprise);
      expect(r.status).toBe(400);
      const body = await r.json();
      expect(body.invalid_params.map((p: { name: string }) => p.name)).toContain(name);
    }
  });
  test('stats over a range count the events seen in it', async () => {
    const r = await get(`/api/v1/stats?from=${at(now - 5 * DAY)}&to=${at(now - 2 * DAY)}`, enterprise);
    const body = await r.json();
    expect(body.total).toBe(2);
    expect(body.by_type).toEqual({ accident: 0, jam: 0, hazard: 0, road_closure: 2 });
    expect(body.top_cities.map((c: { city: { plate: number } }) => c.city.plate).sort()).toEqual([35, 6]);
    expect(body.range.cleared).toBe(1);
    expect(body.range.created).toBe(1);
  });
});

describe('paging history with an open range', () => {
  let p: LimitsTestApp;
  let key: string;
  beforeAll(async () => {
    p = await limitsApp({ rate: 100_000, events: 0 });
    const n = p.clock.now;
    insertEvents(
      p.db.db,
      Array.from({ length: 5 }, (_, i) =>
        eventRow({ id: `evt_page_${i}`, reportedAt: n - (i + 1) * HOUR, firstSeenAt: n - (i + 1) * HOUR, lastSeenAt: n - 60_000, updatedAt: n - (i + 1) * HOUR }, n),
      ),
    );
    insertScan(p.db.db, n - 30_000);
    p.readModel.refresh();
    key = new KeyStore(p.db.sqlite).create({ plan: 'enterprise', name: 'pager', now: n }).key;
  });
  afterAll(() => p.cleanup());

  type Page = { data: { id: string }[]; pagination: { next: string | null; next_cursor: string | null; total: number }; meta: { history: { from: string; to: string } } };
  const page = async (path: string) => (await p.request(path, { headers: { authorization: `Bearer ${key}` } }).then((r) => r.json())) as Page;

  test('later pages keep the first page\'s range: an event first seen after it does not slip in', async () => {
    const first = await page('/api/v1/events?status=all&limit=2');
    expect(first.pagination.total).toBe(5);
    // Two minutes later a newer event appears (reported now, so it would sort first).
    p.clock.now += 120_000;
    const n = p.clock.now;
    insertEvents(p.db.db, [eventRow({ id: 'evt_page_new', reportedAt: n - 30_000, firstSeenAt: n - 30_000, lastSeenAt: n - 30_000, updatedAt: n - 30_000 }, n)]);

    const seen = first.data.map((e) => e.id);
    let path = first.pagination.next;
    while (path !== null) {
      const next = await page(path);
      expect(next.pagination.total).toBe(5);
      expect(next.meta.history).toEqual(first.meta.history);
      seen.push(...next.data.map((e) => e.id));
      path = next.pagination.next;
    }
    expect(seen).toEqual(['evt_page_0', 'evt_page_1', 'evt_page_2', 'evt_page_3', 'evt_page_4']);
    // The cursor alone, with the first request's parameters, reads the same range too.
    const byCursor = await page(`/api/v1/events?status=all&limit=2&cursor=${first.pagination.next_cursor}`);
    expect(byCursor.meta.history).toEqual(first.meta.history);
    expect(byCursor.pagination.total).toBe(5);
    // A new first page does see it.
    const fresh = await page('/api/v1/events?status=all&limit=2');
    expect(fresh.pagination.total).toBe(6);
    expect(fresh.data[0]!.id).toBe('evt_page_new');
  });

  test('explicit from/to win over the range a cursor carries', async () => {
    const first = await page('/api/v1/events?status=all&limit=2');
    const to = new Date(p.clock.now - 150 * 60_000).toISOString();
    const r = await page(`/api/v1/events?status=all&limit=2&to=${to}&cursor=${first.pagination.next_cursor}`);
    expect(r.meta.history.to).toBe(to.replace('.000', ''));
  });

  test('a history cursor is refused without the history parameters, and a range it cannot have carried names it', async () => {
    const first = await page('/api/v1/events?status=all&limit=2');
    const cursor = first.pagination.next_cursor!;
    const names = async (path: string) => {
      const r = await p.request(path, { headers: { authorization: `Bearer ${key}` } });
      expect(r.status).toBe(400);
      return ((await r.json()) as { invalid_params: { name: string; reason: string }[] }).invalid_params;
    };
    // Without status/from/to it would have paged the 24-hour view.
    expect((await names(`/api/v1/events?limit=2&cursor=${cursor}`)).map((x) => x.name)).toEqual(['cursor']);
    // An explicit to before the cursor's range start names to, not the from the client never sent.
    const early = await names(`/api/v1/events?status=all&limit=2&to=${new Date(p.clock.now - 30 * HOUR).toISOString()}&cursor=${cursor}`);
    expect(early).toEqual([{ name: 'to', reason: "must not be before the start of the cursor's range" }]);
    // Without a cursor, an early to is blamed on to as well (from defaults to 24 hours ago).
    expect((await names(`/api/v1/events?status=all&to=${new Date(p.clock.now - 30 * HOUR).toISOString()}`)).map((x) => x.name)).toEqual(['to']);
    // A forged range reaching into the future is not a cursor this API returned.
    const forged = Buffer.from(`2.${p.clock.now - HOUR}.${p.clock.now - DAY}.999999999999999.evt_page_1`, 'utf8').toString('base64url');
    expect((await names(`/api/v1/events?status=all&limit=2&cursor=${forged}`)).map((x) => x.name)).toEqual(['cursor']);
  });

  test('a cursor whose range has aged out of the kept history is a 400 naming the cursor', async () => {
    const first = await page('/api/v1/events?status=all&limit=2');
    const saved = p.clock.now;
    p.clock.now += 100 * DAY;
    const r = await p.request(`/api/v1/events?status=all&limit=2&cursor=${first.pagination.next_cursor}`, { headers: { authorization: `Bearer ${key}` } });
    p.clock.now = saved;
    expect(r.status).toBe(400);
    const body = await r.json();
    expect(body.invalid_params.map((x: { name: string }) => x.name)).toEqual(['cursor']);
  });
});

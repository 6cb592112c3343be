import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import type { NewEventRow } from '../../src/db/schema/index.ts';
import { iso } from '../../src/clock.ts';
import { testApp, type TestApp } from '../helpers/app.ts';
import { eventRow, insertEvents, insertScan } from '../helpers/factories.ts';
import { allIds, byListOrder, distanceKm, expectInvalidParam, expectProblem, getList, variedRows } from '../helpers/http.ts';

// Each list parameter with good and bad values (CONTRACT §2, §3), and each filter compared with
// what the seeded rows say it must return.

let t: TestApp;
let active: NewEventRow[];
let now: number;
const HOUR = 3_600_000;

beforeAll(async () => {
  t = await testApp();
  now = t.clock.now;
  active = variedRows(now, 180);
  // Cleared within the window, updated (cleared) 30 min ago: only visible through updated_since.
  const clearedRecently = eventRow({ id: 'evt_cleared_recent', plate: 34, status: 'cleared', clearedAt: now - HOUR / 2, updatedAt: now - HOUR / 2, lastSeenAt: now - HOUR, reportedAt: now - 2 * HOUR }, now);
  // Cleared 30 min ago, but its updated_at was left at the last field change 5 h ago.
  const clearedStale = eventRow({ id: 'evt_cleared_stale', plate: 6, status: 'cleared', clearedAt: now - HOUR / 2, updatedAt: now - 5 * HOUR, lastSeenAt: now - HOUR, reportedAt: now - 6 * HOUR }, now);
  // Cleared 10 h ago: in the window, but before the updated_since used below.
  const clearedOld = eventRow({ id: 'evt_cleared_old', plate: 35, status: 'cleared', clearedAt: now - 10 * HOUR, updatedAt: now - 10 * HOUR, lastSeenAt: now - 11 * HOUR, reportedAt: now - 12 * HOUR }, now);
  // Out of the window: seen 25 h ago.
  const expired = eventRow({ id: 'evt_expired', plate: 34, lastSeenAt: now - 25 * HOUR, updatedAt: now - 25 * HOUR, firstSeenAt: now - 26 * HOUR, reportedAt: now - 26 * HOUR }, now);
  insertEvents(t.db.db, [...active, clearedRecently, clearedStale, clearedOld, expired]);
  insertScan(t.db.db, now - 10_000);
  t.readModel.refresh();
});
afterAll(() => t.cleanup());

function expected(filter: (r: NewEventRow) => boolean): string[] {
  return active.filter(filter).sort(byListOrder).map((r) => r.id);
}

describe('limit', () => {
  test('1 → one event, pagination.limit 1', async () => {
    const body = await getList(t, '/api/v1/events?limit=1');
    expect(body.data).toHaveLength(1);
    expect(body.pagination.limit).toBe(1);
    expect(body.pagination.total).toBe(active.length);
    expect(body.data[0]!.id).toBe(expected(() => true)[0]!);
  });
  test('1000 → all 180', async () => {
    const body = await getList(t, '/api/v1/events?limit=1000');
    expect(body.data).toHaveLength(180);
    expect(body.pagination).toMatchObject({ limit: 1000, total: 180, next_cursor: null, next: null });
  });
  test('default 100', async () => {
    const body = await getList(t, '/api/v1/events');
    expect(body.data).toHaveLength(100);
    expect(body.pagination.limit).toBe(100);
    expect(body.pagination.next_cursor).toBeString();
  });
  test('leading zeros are still a whole number', async () => {
    expect((await getList(t, '/api/v1/events?limit=007')).data).toHaveLength(7);
  });
  for (const bad of ['0', '1001', 'abc', '1.5', '1e2', '%2B5', '+5', '-1', '', '%20', '0x10', '10abc', '99999999999999999']) {
    test(`limit=${bad} → 400 naming limit`, async () => {
      await expectInvalidParam(await t.request(`/api/v1/events?limit=${bad}`), 'limit');
      await expectInvalidParam(await t.request(`/api/v1/events/istanbul?limit=${bad}`), 'limit');
    });
  }
  test('bare limit (no =) → 400', async () => {
    await expectInvalidParam(await t.request('/api/v1/events?limit'), 'limit');
  });
});

describe('type', () => {
  test('single', async () => {
    expect(await allIds(t, '/api/v1/events?type=jam&limit=1000')).toEqual(expected((r) => r.type === 'jam'));
  });
  test('comma list', async () => {
    expect(await allIds(t, '/api/v1/events?type=accident,road_closure&limit=1000')).toEqual(expected((r) => r.type === 'accident' || r.type === 'road_closure'));
  });
  test('all four = everything', async () => {
    expect(await allIds(t, '/api/v1/events?type=accident,jam,hazard,road_closure&limit=1000')).toEqual(expected(() => true));
  });
  for (const bad of ['crash', 'jam,', ',jam', 'jam,,hazard', 'jam;hazard', 'JAM', 'police']) {
    test(`type=${bad} → 400`, async () => {
      await expectInvalidParam(await t.request(`/api/v1/events?type=${bad}`), 'type');
    });
  }
});

describe('severity', () => {
  test('single', async () => {
    expect(await allIds(t, '/api/v1/events?severity=major&limit=1000')).toEqual(expected((r) => r.severity === 'major'));
  });
  test('comma list', async () => {
    expect(await allIds(t, '/api/v1/events?severity=minor,unknown&limit=1000')).toEqual(expected((r) => r.severity === 'minor' || r.severity === 'unknown'));
  });
  for (const bad of ['huge', 'major,', 'MAJOR', '1']) {
    test(`severity=${bad} → 400`, async () => {
      await expectInvalidParam(await t.request(`/api/v1/events?severity=${bad}`), 'severity');
    });
  }
});

describe('city filter', () => {
  test('?city= returns only that province', async () => {
    expect(await allIds(t, '/api/v1/events?city=izmir&limit=1000')).toEqual(expected((r) => r.plate === 35));
  });
  test('path and parameter agree', async () => {
    expect(await allIds(t, '/api/v1/events/06?limit=7')).toEqual(await allIds(t, '/api/v1/events?city=ankara&limit=9'));
  });
  test('filters combine with AND', async () => {
    expect(await allIds(t, '/api/v1/events/istanbul?type=jam,hazard&severity=minor,moderate&limit=1000')).toEqual(
      expected((r) => r.plate === 34 && (r.type === 'jam' || r.type === 'hazard') && (r.severity === 'minor' || r.severity === 'moderate')),
    );
  });
});

describe('bbox', () => {
  test('good: events whose point is inside', async () => {
    const [minLon, minLat, maxLon, maxLat] = [28.9, 40.95, 29.1, 41.1];
    const ids = await allIds(t, `/api/v1/events?bbox=${minLon},${minLat},${maxLon},${maxLat}&limit=1000`);
    const want = expected((r) => r.lon >= minLon && r.lon <= maxLon && r.lat >= minLat && r.lat <= maxLat);
    expect(want.length).toBeGreaterThan(3);
    expect(want.length).toBeLessThan(active.filter((r) => r.plate === 34).length);
    expect(ids).toEqual(want);
  });
  test('whole of Turkey = everything; negative coordinates parse', async () => {
    expect(await allIds(t, '/api/v1/events?bbox=25.5,35.8,44.9,42.2&limit=1000')).toEqual(expected(() => true));
    expect(await allIds(t, '/api/v1/events?bbox=-10.5,-5,0,0&limit=1000')).toEqual([]);
  });
  const bad: [string, string][] = [
    ['29.1,40.95,28.9,41.1', 'minLon > maxLon'],
    ['28.9,41.1,29.1,40.95', 'minLat > maxLat'],
    ['181,40,182,41', 'longitude out of range'],
    ['28,-91,29,41', 'latitude out of range'],
    ['28.9,40.95,29.1', 'three numbers'],
    ['28.9,40.95,29.1,41.1,5', 'five numbers'],
    ['a,b,c,d', 'not numbers'],
    ['28.9 40.95 29.1 41.1', 'spaces'],
  ];
  for (const [v, why] of bad) {
    test(`${why} → 400`, async () => {
      await expectInvalidParam(await t.request(`/api/v1/events?bbox=${encodeURIComponent(v)}`), 'bbox');
    });
  }
});

describe('near and radius_km', () => {
  const [lat, lon] = [41.0082, 28.9784];
  test('radius 10 (default) filters by distance', async () => {
    const want = expected((r) => distanceKm(lat, lon, r.lat, r.lon) <= 10);
    expect(want.length).toBeGreaterThan(2);
    expect(await allIds(t, `/api/v1/events?near=${lat},${lon}&limit=1000`)).toEqual(want);
    expect(await allIds(t, `/api/v1/events?near=${lat},${lon}&radius_km=10&limit=1000`)).toEqual(want);
  });
  test('radius 3.5 and 200', async () => {
    expect(await allIds(t, `/api/v1/events?near=${lat},${lon}&radius_km=3.5&limit=1000`)).toEqual(expected((r) => distanceKm(lat, lon, r.lat, r.lon) <= 3.5));
    // 200 km from İstanbul reaches no other seeded province (Ankara, İzmir… are further).
    const wide = expected((r) => distanceKm(lat, lon, r.lat, r.lon) <= 200);
    expect(wide).toEqual(expected((r) => r.plate === 34));
    expect(await allIds(t, `/api/v1/events?near=${lat},${lon}&radius_km=200&limit=1000`)).toEqual(wide);
  });
  test('near with negative coordinates parses (and finds nothing in Turkey)', async () => {
    expect(await allIds(t, '/api/v1/events?near=-33.9,-70.6&radius_km=200')).toEqual([]);
  });
  test('radius_km without near → 400', async () => {
    await expectInvalidParam(await t.request('/api/v1/events?radius_km=5'), 'radius_km');
  });
  for (const r of ['0', '201', '-1', 'abc', '1e1', '']) {
    test(`radius_km=${r} → 400`, async () => {
      await expectInvalidParam(await t.request(`/api/v1/events?near=${lat},${lon}&radius_km=${r}`), 'radius_km');
    });
  }
  for (const n of ['41', '41,29,3', '91,29', '41,181', 'a,b', '41;29']) {
    test(`near=${n} → 400`, async () => {
      await expectInvalidParam(await t.request(`/api/v1/events?near=${encodeURIComponent(n)}`), 'near');
    });
  }
});

describe('updated_since', () => {
  test('events updated since then, cleared ones included', async () => {
    const since = now - 2 * HOUR;
    const body = await getList(t, `/api/v1/events?updated_since=${iso(since)}&limit=1000`);
    const ids = body.data.map((e) => e.id);
    const want = [...active.filter((r) => r.updatedAt! >= since).map((r) => r.id), 'evt_cleared_recent', 'evt_cleared_stale'];
    expect(ids.sort()).toEqual(want.sort());
    const cleared = body.data.find((e) => e.id === 'evt_cleared_recent')!;
    expect(cleared.status).toBe('cleared');
    expect(cleared.cleared_at).toBe(iso(now - HOUR / 2));
    // Cleared after `since` even though its last field change is older: still an update to sync.
    expect(ids).toContain('evt_cleared_stale');
    expect(ids).not.toContain('evt_cleared_old');
    expect(ids).not.toContain('evt_expired');
  });
  test('cleared events never show without updated_since', async () => {
    const ids = await allIds(t, '/api/v1/events?limit=1000');
    expect(ids).toEqual(expected(() => true));
  });
  test('offsets and fractions are accepted', async () => {
    const since = now - 2 * HOUR;
    const a = await allIds(t, `/api/v1/events?updated_since=${iso(since)}&limit=1000`);
    const b = await allIds(t, `/api/v1/events?updated_since=${encodeURIComponent(new Date(since).toISOString())}&limit=1000`);
    const local = new Date(since + 3 * HOUR).toISOString().slice(0, 19) + '+03:00';
    const c = await allIds(t, `/api/v1/events?updated_since=${encodeURIComponent(local)}&limit=1000`);
    expect(b).toEqual(a);
    expect(c).toEqual(a);
  });
  test('exactly 24 h ago is still plain sync', async () => {
    expect((await t.request(`/api/v1/events?updated_since=${iso(now - 24 * HOUR)}`)).status).toBe(200);
  });
  test('in the future → 400', async () => {
    await expectInvalidParam(await t.request(`/api/v1/events?updated_since=${iso(now + HOUR)}`), 'updated_since');
  });
  test('older than 24 h → 403 plan_required', async () => {
    const body = await expectProblem(await t.request(`/api/v1/events?updated_since=${iso(now - 25 * HOUR)}`), 403, 'plan_required');
    expect(body.feature).toBe('history');
    // A valid date far back is history too, not a malformed value.
    await expectProblem(await t.request('/api/v1/events?updated_since=0050-01-01T00:00:00Z'), 403, 'plan_required');
  });
  for (const bad of ['yesterday', '2026-11-21', '2026-11-21 09:00:00Z', '2026-13-01T00:00:00Z', '2026-11-21T25:00:00Z', '2026-02-30T10:00:00Z', '1700000000', '2026-11-21T09:00:00']) {
    test(`updated_since=${bad} → 400`, async () => {
      await expectInvalidParam(await t.request(`/api/v1/events?updated_since=${encodeURIComponent(bad)}`), 'updated_since');
    });
  }
});

describe('format', () => {
  test('format=geojson and Accept: application/geo+json give the same collection', async () => {
    const a = await t.request('/api/v1/events?format=geojson&limit=3');
    const b = await t.request('/api/v1/events?limit=3', { headers: { accept: 'application/geo+json' } });
    expect(a.headers.get('content-type')).toStartWith('application/geo+json');
    expect(b.headers.get('content-type')).toStartWith('application/geo+json');
    const ja = await a.json();
    const jb = await b.json();
    expect(ja.type).toBe('FeatureCollection');
    expect(jb.features).toEqual(ja.features);
  });
  test('format=json wins over Accept', async () => {
    const r = await t.request('/api/v1/events?format=json&limit=1', { headers: { accept: 'application/geo+json' } });
    expect(r.headers.get('content-type')).toStartWith('application/json');
    expect((await r.json()).data).toHaveLength(1);
  });
  for (const bad of ['xml', 'csv', 'GEOJSON', '']) {
    test(`format=${bad} → 400`, async () => {
      await expectInvalidParam(await t.request(`/api/v1/events?format=${bad}`), 'format');
    });
  }
});

describe('cursor', () => {
  for (const bad of ['garbage', '!!', Buffer.from('1.abc.evt_x').toString('base64url'), Buffer.from('2.1.evt_x').toString('base64url'), 'a'.repeat(500)]) {
    test(`cursor=${bad.slice(0, 20)} → 400`, async () => {
      await expectInvalidParam(await t.request(`/api/v1/events?cursor=${bad}`), 'cursor');
    });
  }
  test('empty cursor → 400', async () => {
    await expectInvalidParam(await t.request('/api/v1/events?cursor='), 'cursor');
  });
});

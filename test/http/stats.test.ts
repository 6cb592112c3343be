import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import type { NewEventRow } from '../../src/db/schema/index.ts';
import { EVENT_TYPES, SEVERITIES } from '../../src/domain/event.ts';
import { PROVINCES } from '../../src/provinces/index.ts';
import { testApp, type TestApp } from '../helpers/app.ts';
import { eventRow, insertEvents, insertScan } from '../helpers/factories.ts';
import { expectInvalidParam } from '../helpers/http.ts';

// GET /api/v1/stats (CONTRACT §2): counts over active events in the window, all four type keys
// always, the busiest provinces with `top`, and last_24h created / cleared.

interface StatsBody {
  generated_at: string;
  data_updated_at: string | null;
  window_hours: number;
  total: number;
  by_type: Record<string, number>;
  by_severity: Record<string, number>;
  top_cities: { city: { slug: string; name: string; plate: number }; count: number; by_type: Record<string, number> }[];
  last_24h: { created: number; cleared: number };
}

const HOUR = 3_600_000;

async function stats(t: TestApp, query = ''): Promise<StatsBody> {
  const res = await t.request(`/api/v1/stats${query}`);
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toStartWith('application/json');
  return (await res.json()) as StatsBody;
}

test('with no events at all: every key present, all zero', async () => {
  const t = await testApp();
  try {
    const s = await stats(t);
    expect(s.total).toBe(0);
    expect(s.by_type).toEqual({ accident: 0, jam: 0, hazard: 0, road_closure: 0 });
    expect(s.by_severity).toEqual({ minor: 0, moderate: 0, major: 0, unknown: 0 });
    expect(s.top_cities).toEqual([]);
    expect(s.last_24h).toEqual({ created: 0, cleared: 0 });
    expect(s.window_hours).toBe(24);
    expect(s.data_updated_at).toBeNull();
    expect(s.generated_at).toBe('2026-11-21T10:00:00Z');
  } finally {
    t.cleanup();
  }
});

describe('with data', () => {
  let t: TestApp;
  let active: NewEventRow[];
  // Per plate, how many active events: a strict ranking except a tie between 35 and 16.
  const perPlate: [number, number][] = [
    [34, 9],
    [6, 7],
    [35, 5],
    [16, 5],
    [7, 4],
    [1, 3],
    [61, 2],
    [27, 2],
    [42, 1],
    [55, 1],
    [25, 1],
    [65, 1],
  ];

  beforeAll(async () => {
    t = await testApp();
    const now = t.clock.now;
    active = [];
    let i = 0;
    for (const [plate, n] of perPlate) {
      for (let k = 0; k < n; k++, i++) {
        // Half first seen in the window (created), half first seen two days ago and still active.
        active.push(
          eventRow(
            {
              id: `evt_st${String(i).padStart(3, '0')}`,
              plate,
              type: EVENT_TYPES[i % 4]!,
              severity: SEVERITIES[i % 3]!,
              firstSeenAt: i % 2 === 0 ? now - 2 * HOUR : now - 48 * HOUR,
            },
            now,
          ),
        );
      }
    }
    const cleared = [
      eventRow({ id: 'evt_stc1', plate: 34, status: 'cleared', clearedAt: now - HOUR, firstSeenAt: now - 3 * HOUR }, now),
      eventRow({ id: 'evt_stc2', plate: 34, status: 'cleared', clearedAt: now - 5 * HOUR, firstSeenAt: now - 30 * HOUR }, now),
      // Cleared before the window: counted nowhere.
      eventRow({ id: 'evt_stc3', plate: 6, status: 'cleared', clearedAt: now - 30 * HOUR, firstSeenAt: now - 40 * HOUR, lastSeenAt: now - 31 * HOUR }, now),
    ];
    // Active but not seen for 25 h: out of the window.
    const stale = eventRow({ id: 'evt_stale', plate: 6, lastSeenAt: now - 25 * HOUR, firstSeenAt: now - 26 * HOUR }, now);
    insertEvents(t.db.db, [...active, ...cleared, stale]);
    insertScan(t.db.db, now - 20_000);
    t.readModel.refresh();
  });
  afterAll(() => t.cleanup());

  test('totals and breakdowns count the active events of the window', async () => {
    const s = await stats(t);
    expect(s.total).toBe(active.length);
    for (const k of EVENT_TYPES) expect(s.by_type[k]).toBe(active.filter((r) => r.type === k).length);
    for (const k of SEVERITIES) expect(s.by_severity[k]).toBe(active.filter((r) => r.severity === k).length);
    expect(Object.keys(s.by_type).sort()).toEqual([...EVENT_TYPES].sort());
    expect(Object.keys(s.by_severity).sort()).toEqual([...SEVERITIES].sort());
    expect(s.data_updated_at).toBe('2026-11-21T09:59:40Z');
  });

  test('the total agrees with the list endpoint and health', async () => {
    const s = await stats(t);
    const list = await (await t.request('/api/v1/events?limit=1')).json();
    const health = await (await t.request('/api/v1/health')).json();
    expect(list.pagination.total).toBe(s.total);
    expect(health.events.active).toBe(s.total);
  });

  test('last_24h counts events first seen and cleared in the window', async () => {
    const s = await stats(t);
    const createdActive = active.filter((r) => r.firstSeenAt! >= t.clock.now - 24 * HOUR).length;
    expect(s.last_24h).toEqual({ created: createdActive + 1, cleared: 2 });
  });

  test('top_cities: 10 by default, busiest first, ties by plate, per-type counts', async () => {
    const s = await stats(t);
    expect(s.top_cities).toHaveLength(10);
    expect(s.top_cities.map((c) => [c.city.plate, c.count])).toEqual([...perPlate].sort((a, b) => b[1] - a[1] || a[0] - b[0]).slice(0, 10));
    for (const c of s.top_cities) {
      const p = PROVINCES[c.city.plate - 1]!;
      expect(c.city).toEqual({ slug: p.slug, name: p.name, plate: p.plate });
      const mine = active.filter((r) => r.plate === c.city.plate);
      expect(c.by_type).toEqual(Object.fromEntries(EVENT_TYPES.map((k) => [k, mine.filter((r) => r.type === k).length])));
      expect(c.count).toBe(mine.length);
    }
  });

  test('top=1, top=3, top=81', async () => {
    expect((await stats(t, '?top=1')).top_cities.map((c) => c.city.slug)).toEqual(['istanbul']);
    expect((await stats(t, '?top=3')).top_cities.map((c) => c.city.plate)).toEqual([34, 6, 16]);
    const all = await stats(t, '?top=81');
    expect(all.top_cities).toHaveLength(perPlate.length);
    const counts = all.top_cities.map((c) => c.count);
    expect(counts).toEqual([...counts].sort((a, b) => b - a));
  });

  for (const bad of ['0', '82', '-1', 'abc', '1.5', '1e1', '', '%2B3']) {
    test(`top=${bad} → 400 naming top`, async () => {
      await expectInvalidParam(await t.request(`/api/v1/stats?top=${bad}`), 'top');
    });
  }

  test('key order follows the contract', async () => {
    const text = await (await t.request('/api/v1/stats')).text();
    const keys = Object.keys(JSON.parse(text));
    expect(keys).toEqual(['generated_at', 'data_updated_at', 'window_hours', 'total', 'by_type', 'by_severity', 'top_cities', 'last_24h']);
  });
});

import { afterAll, beforeAll, expect, test } from 'bun:test';
import { testApp, type TestApp } from '../helpers/app.ts';
import { eventRow, insertEvents, insertScan } from '../helpers/factories.ts';
import { getList, type ApiEvent } from '../helpers/http.ts';

// format=geojson / Accept: application/geo+json (CONTRACT §2): a valid RFC 7946 FeatureCollection
// whose features carry the Event fields, with pagination and meta as foreign members.

interface Feature {
  type: string;
  id?: string;
  geometry: { type: string; coordinates: unknown };
  properties: ApiEvent;
}

let t: TestApp;
const line = {
  type: 'LineString' as const,
  coordinates: [
    [28.97, 41.01],
    [28.98, 41.02],
    [28.99, 41.03],
  ] as [number, number][],
};

beforeAll(async () => {
  t = await testApp();
  const now = t.clock.now;
  insertEvents(t.db.db, [
    eventRow({ id: 'evt_g1', type: 'accident', lat: 41.0082, lon: 28.9784, reportedAt: now - 1000, road: 'Barbaros Bulvarı', district: 'Şişli' }, now),
    eventRow({ id: 'evt_g2', type: 'jam', lat: 41.01, lon: 28.97, reportedAt: now - 2000, geometry: line, jam: { speed_kmh: 12.5, length_m: 800, delay_s: 240, level: 3 } }, now),
    eventRow({ id: 'evt_g3', type: 'road_closure', plate: 6, lat: 39.92, lon: 32.85, reportedAt: now - 3000, geometry: { type: 'LineString', coordinates: [[32.85, 39.92], [32.86, 39.93]] } }, now),
    eventRow({ id: 'evt_g4', type: 'hazard', plate: 35, lat: 38.42, lon: 27.14, reportedAt: now - 4000, subtype: 'hazard_on_road_object', description: 'Yolda cisim' }, now),
  ]);
  insertScan(t.db.db, now - 10_000);
  t.readModel.refresh();
});
afterAll(() => t.cleanup());

function isPosition(p: unknown): boolean {
  return Array.isArray(p) && p.length === 2 && p.every((x) => typeof x === 'number' && Number.isFinite(x));
}

async function collection(path: string, init?: RequestInit) {
  const res = await t.request(path, init);
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toStartWith('application/geo+json');
  return (await res.json()) as { type: string; features: Feature[]; pagination: Record<string, unknown>; meta: Record<string, unknown> };
}

test('a FeatureCollection of valid Features, properties equal to the JSON events', async () => {
  const fc = await collection('/api/v1/events?format=geojson');
  const json = await getList(t, '/api/v1/events');
  expect(fc.type).toBe('FeatureCollection');
  expect(fc.features).toHaveLength(4);
  expect(fc.features.map((f) => f.properties)).toEqual(json.data);
  for (const f of fc.features) {
    expect(f.type).toBe('Feature');
    expect(f.properties).toBeObject();
    if (f.id !== undefined) expect(f.id).toBe(f.properties.id);
    const g = f.geometry;
    if (g.type === 'Point') {
      expect(isPosition(g.coordinates)).toBe(true);
      // [lon, lat] order (RFC 7946 §3.1.1), not [lat, lon].
      expect(g.coordinates).toEqual([f.properties.location.lon, f.properties.location.lat]);
    } else {
      expect(g.type).toBe('LineString');
      const cs = g.coordinates as unknown[];
      expect(cs.length).toBeGreaterThanOrEqual(2);
      for (const c of cs) expect(isPosition(c)).toBe(true);
      expect(g).toEqual(f.properties.geometry!);
    }
    for (const k of ['id', 'type', 'subtype', 'severity', 'status', 'city', 'district', 'location', 'geometry', 'road', 'description', 'jam', 'reported_at', 'first_seen_at', 'last_seen_at', 'updated_at', 'cleared_at', 'source', 'confidence']) {
      expect(f.properties).toHaveProperty(k);
    }
  }
  const byId = Object.fromEntries(fc.features.map((f) => [f.properties.id, f]));
  expect(byId.evt_g1!.geometry).toEqual({ type: 'Point', coordinates: [28.9784, 41.0082] });
  expect(byId.evt_g2!.geometry).toEqual(line);
  expect(byId.evt_g2!.properties.jam).toEqual({ speed_kmh: 12.5, length_m: 800, delay_s: 240, level: 3 });
  expect(byId.evt_g4!.geometry.type).toBe('Point');
});

test('pagination and meta ride along', async () => {
  const fc = await collection('/api/v1/events/istanbul?format=geojson&limit=1');
  expect(fc.pagination).toMatchObject({ limit: 1, total: 2 });
  expect(fc.pagination.next_cursor).toBeString();
  expect(fc.meta).toMatchObject({ api_version: '1.0', window_hours: 24, update_interval_seconds: 90, city: { slug: 'istanbul', name: 'İstanbul', plate: 34 } });
  expect(fc.meta.data_updated_at).toBe('2026-11-21T09:59:50Z');
});

test('Accept: application/geo+json selects GeoJSON, filters apply', async () => {
  const fc = await collection('/api/v1/events?type=jam,road_closure', { headers: { accept: 'application/geo+json' } });
  expect(fc.features.map((f) => f.properties.id)).toEqual(['evt_g2', 'evt_g3']);
  expect(fc.features.every((f) => f.geometry.type === 'LineString')).toBe(true);
});

test('an Accept listing geo+json among others selects it too; plain JSON otherwise', async () => {
  await collection('/api/v1/events', { headers: { accept: 'application/geo+json, application/json;q=0.5' } });
  const res = await t.request('/api/v1/events', { headers: { accept: 'application/json' } });
  expect(res.headers.get('content-type')).toStartWith('application/json');
  const any = await t.request('/api/v1/events', { headers: { accept: '*/*' } });
  expect(any.headers.get('content-type')).toStartWith('application/json');
});

test('JSON and GeoJSON of the same query have different ETags', async () => {
  const a = await t.request('/api/v1/events');
  const b = await t.request('/api/v1/events?format=geojson');
  expect(a.headers.get('etag')).not.toBe(b.headers.get('etag'));
  expect(a.headers.get('vary')).toContain('Accept');
});

test('an empty result is an empty FeatureCollection', async () => {
  const fc = await collection('/api/v1/events/hakkari?format=geojson');
  expect(fc.features).toEqual([]);
  expect(fc.pagination).toMatchObject({ total: 0, next_cursor: null, next: null });
});

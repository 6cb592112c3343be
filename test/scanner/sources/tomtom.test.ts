import { afterAll, beforeEach, describe, expect, test } from 'bun:test';
import type { NormalizedItem } from '../../../src/domain/event.ts';
import type { Cell } from '../../../src/scanner/sources/source.ts';
import { parseTomTom, TOMTOM_FIELDS, TomTomSource } from '../../../src/scanner/sources/tomtom.ts';
import { manualClock, readFixture, refusedUrl, startFakeUpstream } from '../../helpers/fake-upstream.ts';

function byId(items: NormalizedItem[], id: string): NormalizedItem {
  const item = items.find((i) => i.sourceId === id);
  if (!item) throw new Error(`no item ${id} in ${items.map((i) => i.sourceId).join(', ')}`);
  return item;
}

const TT = 'TTI-2c9e41f0-6b7a-4d3e-9f12-8a5b7c6d4e3f-TTR';

describe('parseTomTom: synthetic Ankara v5', async () => {
  const items = parseTomTom(await readFixture('synthetic-tomtom-v5-ankara.json'));

  test('five incidents, all kept', () => {
    expect(items.map((i) => i.type)).toEqual(['accident', 'jam', 'road_closure', 'hazard', 'hazard']);
    for (const i of items) expect(i.source).toBe('tomtom');
  });

  test('accident (iconCategory 1, magnitude 3): major, LineString, road from number + from/to', () => {
    expect(byId(items, `${TT}15023311902251000`)).toEqual({
      source: 'tomtom',
      sourceId: `${TT}15023311902251000`,
      type: 'accident',
      subtype: null,
      severity: 'major',
      location: { lat: 39.8796523015, lon: 32.7602144912 },
      geometry: {
        type: 'LineString',
        coordinates: [
          [32.7602144912, 39.8796523015],
          [32.7701235519, 39.8862114006],
          [32.7789921301, 39.8921004472],
        ],
      },
      road: 'D200 (Bilkent Kavşağı → ODTÜ Kavşağı)',
      district: null,
      description: 'Accident; Stationary traffic',
      jam: null,
      reportedAt: Date.parse('2025-03-11T07:31:00Z'),
      confidence: 1, // certain + 4 reports
    });
  });

  test('jam (6, magnitude 2): moderate, jam details from length/delay', () => {
    const jam = byId(items, `${TT}15023311944180002`);
    expect(jam.severity).toBe('moderate');
    expect(jam.jam).toEqual({ speed_kmh: null, length_m: 2210, delay_s: 305, level: 3 });
    expect(jam.road).toBe('Kızılay → Tandoğan');
    expect(jam.confidence).toBe(0.95);
  });

  test('closure (8 + roadworks event, magnitude 4): major road_closure, construction subtype', () => {
    const c = byId(items, `${TT}14998820011240000`);
    expect(c.type).toBe('road_closure');
    expect(c.severity).toBe('major');
    expect(c.subtype).toBe('road_closed_construction');
    expect(c.description).toBe('Closed; Roadworks');
    expect(c.jam).toBeNull();
  });

  test('Point geometry: location from the point, geometry null', () => {
    const car = byId(items, `${TT}15023311950017003`);
    expect(car.type).toBe('hazard');
    expect(car.subtype).toBe('hazard_on_road_car_stopped');
    expect(car.severity).toBe('minor');
    expect(car.location).toEqual({ lon: 32.8701254107, lat: 40.0289912543 });
    expect(car.geometry).toBeNull();
    expect(car.road).toBe('O-20 (Esenboğa Yolu → Pursaklar Kavşağı)');
  });

  test('dangerous conditions (3, magnitude 0): hazard, unknown severity, probable → 0.75', () => {
    const d = byId(items, `${TT}15023311953390004`);
    expect(d.subtype).toBe('hazard_on_road');
    expect(d.severity).toBe('unknown');
    expect(d.confidence).toBe(0.75);
  });
});

describe('parseTomTom: real Boise Orbis sample', async () => {
  const items = parseTomTom(await readFixture('tomtom-orbis-incidentdetails-boise.json'));
  test('roadworks → hazard; closed → road_closure with its 20-point line', () => {
    expect(items).toHaveLength(2);
    const works = byId(items, 'TTI-5df75143-312c-45ab-86c9-2b8e4e49d562-TTR14671884444019001');
    expect(works.type).toBe('hazard');
    expect(works.subtype).toBe('hazard_on_road_construction');
    expect(works.severity).toBe('unknown');
    expect(works.confidence).toBe(0.8); // no probabilityOfOccurrence
    const closed = byId(items, 'TTI-5df75143-312c-45ab-86c9-2b8e4e49d562-TTR14712278436123000');
    expect(closed.type).toBe('road_closure');
    expect(closed.subtype).toBeNull();
    expect(closed.geometry?.coordinates).toHaveLength(20);
  });
});

function incident(id: string, props: Record<string, unknown>, geometry: unknown = { type: 'Point', coordinates: [32.85, 39.92] }) {
  return {
    type: 'Feature',
    geometry,
    properties: {
      id,
      iconCategory: 0,
      magnitudeOfDelay: 0,
      events: [],
      startTime: '2026-11-21T10:00:00Z',
      endTime: null,
      from: 'A',
      to: 'B',
      length: 100,
      delay: null,
      roadNumbers: [],
      timeValidity: 'present',
      ...props,
    },
  };
}
const ev = (iconCategory: number, code = 0, description = `cat ${iconCategory}`) => ({ iconCategory, code, description });

describe('parseTomTom: every mapping row', () => {
  const items = parseTomTom({
    incidents: [
      incident('works-closed', { iconCategory: 9, events: [ev(9, 701), ev(8, 401)] }),
      incident('jam-mag4-closed', { iconCategory: 6, magnitudeOfDelay: 4, events: [ev(6, 101), ev(0, 401)] }),
      incident('mag4-no-4xx', { iconCategory: 6, magnitudeOfDelay: 4, events: [ev(6, 101)] }),
      incident('zero-accident-event', { iconCategory: 0, events: [ev(0, 1), ev(6, 101), ev(1, 201)] }),
      incident('zero-nothing', { iconCategory: 0, events: [ev(0, 1)] }),
      incident('lane-closed', { iconCategory: 7, magnitudeOfDelay: 1, events: [ev(7, 500)] }),
      incident('fog', { iconCategory: 2 }),
      incident('rain', { iconCategory: 4 }),
      incident('ice', { iconCategory: 5 }),
      incident('wind', { iconCategory: 10 }),
      incident('flood', { iconCategory: 11 }),
      incident('unknown-category', { iconCategory: 12 }),
      incident('future', { iconCategory: 1, timeValidity: 'future' }),
      incident('bad-category', { iconCategory: '1' }),
      incident('bad-geometry', { iconCategory: 1 }, { type: 'Polygon', coordinates: [] }),
      incident('no-geometry', { iconCategory: 1 }, null),
      incident('no-start', { iconCategory: 1, startTime: null, lastReportTime: '2026-11-21T09:00:00Z' }),
      incident('no-time', { iconCategory: 1, startTime: null }),
      incident('risky', { iconCategory: 1, magnitudeOfDelay: 1, probabilityOfOccurrence: 'risk_of' }),
      incident('improbable', { iconCategory: 1, probabilityOfOccurrence: 'improbable', numberOfReports: 1 }),
      incident('dupe', { iconCategory: 1 }),
      incident('dupe', { iconCategory: 6 }),
    ],
  });
  const has = (id: string) => items.some((i) => i.sourceId === id);

  test('a primary 9 with an event 8 is a road_closure', () => {
    expect(byId(items, 'works-closed').type).toBe('road_closure');
    expect(byId(items, 'works-closed').subtype).toBe('road_closed_construction');
  });
  test('magnitude 4 with a 4xx event code is a road_closure; without one it is the primary kind', () => {
    expect(byId(items, 'jam-mag4-closed').type).toBe('road_closure');
    const j = byId(items, 'mag4-no-4xx');
    expect(j.type).toBe('jam');
    expect(j.severity).toBe('unknown');
    expect(j.jam?.level).toBeNull();
  });
  test('iconCategory 0: the most telling event decides, else dropped', () => {
    expect(byId(items, 'zero-accident-event').type).toBe('accident');
    expect(has('zero-nothing')).toBe(false);
    expect(has('unknown-category')).toBe(false);
  });
  test('hazard categories and their subtypes', () => {
    expect(byId(items, 'lane-closed').subtype).toBe('hazard_on_road_lane_closed');
    expect(byId(items, 'lane-closed').severity).toBe('minor');
    expect(byId(items, 'fog').subtype).toBe('hazard_weather_fog');
    expect(byId(items, 'rain').subtype).toBe('hazard_weather_heavy_rain');
    expect(byId(items, 'ice').subtype).toBe('hazard_on_road_ice');
    expect(byId(items, 'wind').subtype).toBe('hazard_weather_wind');
    expect(byId(items, 'flood').subtype).toBe('hazard_weather_flood');
  });
  test('future items, wrong types and unusable geometry are skipped', () => {
    for (const id of ['future', 'bad-category', 'bad-geometry', 'no-geometry', 'no-time']) expect(has(id)).toBe(false);
  });
  test('reportedAt falls back to lastReportTime', () => {
    expect(byId(items, 'no-start').reportedAt).toBe(Date.parse('2026-11-21T09:00:00Z'));
  });
  test('confidence from probabilityOfOccurrence and numberOfReports', () => {
    expect(byId(items, 'risky').confidence).toBe(0.5);
    expect(byId(items, 'improbable').confidence).toBe(0.26);
    expect(byId(items, 'risky').severity).toBe('minor');
  });
  test('the same id twice is one item', () => {
    expect(items.filter((i) => i.sourceId === 'dupe')).toHaveLength(1);
  });
  test('odd payloads give no items', () => {
    for (const p of [null, [], {}, { incidents: 'x' }, { incidents: [1, null, {}] }]) expect(parseTomTom(p)).toEqual([]);
  });
});

// ---------------------------------------------------------------------------------------------

const up = startFakeUpstream();
afterAll(() => up.stop());
beforeEach(() => up.clearRequests());

const KEY = 'tt-TEST-KEY-0123456789';
const CELL: Cell = { id: 'ank', bbox: [32.3, 39.6, 33.2, 40.2] };

function source(path: string, now = manualClock().now, timeoutMs = 150): TomTomSource {
  return new TomTomSource({ apiKey: KEY, baseUrl: up.url(path), timeoutMs, now, sleep: async () => {}, random: () => 0 });
}

describe('TomTomSource', () => {
  test('sends key, bbox (minLon,minLat,maxLon,maxLat), the full fields, en-GB and present', async () => {
    up.route('/tt', { file: 'synthetic-tomtom-v5-ankara.json' });
    const r = await source('/tt').fetchCell(CELL);
    expect(r.ok && r.items).toHaveLength(5);
    const q = up.requests[0]?.query;
    expect(q?.get('key')).toBe(KEY);
    expect(q?.get('bbox')).toBe('32.3,39.6,33.2,40.2');
    expect(q?.get('fields')).toBe(TOMTOM_FIELDS);
    expect(q?.get('fields')).toContain('probabilityOfOccurrence');
    expect(q?.get('language')).toBe('en-GB');
    expect(q?.get('timeValidityFilter')).toBe('present');
  });

  test('403 backs off the whole source, the key stays out of the error and the status', async () => {
    const clock = manualClock();
    up.route('/tt403', {
      status: 403,
      json: { detailedError: { code: 'Forbidden', message: `Developer Over Qps for ${KEY}` } },
    });
    const s = source('/tt403', clock.now);
    const r = await s.fetchCell(CELL);
    expect(!r.ok && r.kind).toBe('blocked');
    expect(r.requests).toBe(1);
    expect(s.status().state).toBe('backing_off');
    expect(s.status().until).toBe(clock.now() + 60_000);
    expect(s.status().reason).toContain('403');
    expect(JSON.stringify(r)).not.toContain(KEY);
    expect(JSON.stringify(s.status())).not.toContain(KEY);
    const next = await s.fetchCell({ id: 'x', bbox: [33, 39, 34, 40] });
    expect(!next.ok && next.kind).toBe('backoff');
    expect(up.count('/tt403')).toBe(1);
    clock.advance(60_000);
    up.route('/tt403', { file: 'tomtom-orbis-incidentdetails-boise.json' });
    expect((await s.fetchCell(CELL)).ok).toBe(true);
    expect(s.status().state).toBe('ok');
  });

  test('400 is a failed cell, not retried, no back-off', async () => {
    up.route('/tt400', { status: 400, json: { error: 'bbox too large' } });
    const s = source('/tt400');
    const r = await s.fetchCell(CELL);
    expect(!r.ok && r.kind).toBe('http');
    expect(up.count('/tt400')).toBe(1);
    expect(s.status().state).toBe('ok');
  });

  test('500 → retried once then http; timeout; truncated; refused — never leaking the key', async () => {
    up.route('/tt500', { status: 500, body: 'oops' });
    const e500 = await source('/tt500').fetchCell(CELL);
    expect(!e500.ok && e500.kind).toBe('http');
    expect(e500.requests).toBe(2);

    up.route('/ttslow', { delayMs: 400, file: 'synthetic-tomtom-v5-ankara.json' });
    const slow = await source('/ttslow', manualClock().now, 60).fetchCell(CELL);
    expect(!slow.ok && slow.kind).toBe('timeout');

    up.route('/tttrunc', { file: 'synthetic-tomtom-v5-ankara.json', truncate: 300 });
    const trunc = await source('/tttrunc').fetchCell(CELL);
    expect(!trunc.ok && trunc.kind).toBe('parse');

    const refused = await new TomTomSource({
      apiKey: KEY,
      baseUrl: await refusedUrl('/incidentDetails'),
      timeoutMs: 150,
      now: Date.now,
      sleep: async () => {},
      random: () => 0,
    }).fetchCell(CELL);
    expect(!refused.ok && refused.kind).toBe('network');

    for (const r of [e500, slow, trunc, refused]) {
      expect(!r.ok && r.error).toContain('key=REDACTED');
      expect(JSON.stringify(r)).not.toContain(KEY);
    }
  });

  test('an HTML page is a parse failure for TomTom (no back-off)', async () => {
    up.route('/tthtml', { html: '<html>maintenance</html>' });
    const s = source('/tthtml');
    const r = await s.fetchCell(CELL);
    expect(!r.ok && r.kind).toBe('parse');
    expect(s.status().state).toBe('ok');
  });

  test('concurrency 4', async () => {
    up.route('/ttconc', { delayMs: 25, json: { incidents: [] } });
    const s = source('/ttconc');
    expect(s.concurrency).toBe(4);
    const cells = Array.from({ length: 10 }, (_, i): Cell => ({ id: `c${i}`, bbox: [i, 39, i + 0.5, 39.5] }));
    await Promise.all(cells.map((c) => s.fetchCell(c)));
    expect(up.maxInFlight('/ttconc')).toBe(4);
  });
});

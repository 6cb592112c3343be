import { afterAll, beforeEach, describe, expect, test } from 'bun:test';
import type { NormalizedItem } from '../../../src/domain/event.ts';
import { HereSource, parseHere } from '../../../src/scanner/sources/here.ts';
import type { Cell } from '../../../src/scanner/sources/source.ts';
import { manualClock, readFixture, refusedUrl, startFakeUpstream } from '../../helpers/fake-upstream.ts';

function byId(items: NormalizedItem[], id: string): NormalizedItem {
  const item = items.find((i) => i.sourceId === id);
  if (!item) throw new Error(`no item ${id} in ${items.map((i) => i.sourceId).join(', ')}`);
  return item;
}

describe('parseHere: synthetic Istanbul (tr-TR)', async () => {
  const items = parseHere(await readFixture('synthetic-here-v7-incidents-istanbul.json'));

  test('accident, closure, construction, congestion', () => {
    expect(items.map((i) => i.type)).toEqual(['accident', 'road_closure', 'hazard', 'jam']);
    for (const i of items) expect(i.source).toBe('here');
  });

  test('accident: concatenated links (shared endpoint once), criticality major → moderate', () => {
    expect(byId(items, '3218845120077341902')).toEqual({
      source: 'here',
      sourceId: '3218845120077341902',
      type: 'accident',
      subtype: null,
      severity: 'moderate',
      location: { lat: 41.06811, lon: 29.01203 },
      geometry: {
        type: 'LineString',
        coordinates: [
          [29.01203, 41.06811],
          [29.01911, 41.06402],
          [29.02602, 41.05903],
          [29.03015, 41.05544],
        ],
      },
      road: null,
      district: null,
      description: 'Zincirlikuyu ile 15 Temmuz Şehitler Köprüsü arasında - Kaza',
      jam: null,
      reportedAt: Date.parse('2025-03-11T07:30:12Z'),
      confidence: 0.9,
    });
  });

  test('an updated incident is keyed on originalId, not id', () => {
    const c = byId(items, '2291770345118006441');
    expect(items.some((i) => i.sourceId === '1177320045566129003')).toBe(false);
    expect(c.type).toBe('road_closure');
    expect(c.severity).toBe('major');
    expect(c.road).toBe('BARBAROS BULVARI (KUZEY)');
    expect(c.location).toEqual({ lat: 41.06656, lon: 29.01336 });
    // 5 links, 36 points, 4 shared endpoints
    expect(c.geometry?.coordinates).toHaveLength(32);
  });

  test('construction → hazard; congestion → jam with severity from criticality', () => {
    const works = byId(items, '4120098833217765001');
    expect(works.subtype).toBe('hazard_on_road_construction');
    expect(works.severity).toBe('minor');
    const jam = byId(items, '2760013398455120007');
    expect(jam.severity).toBe('minor');
    expect(jam.jam).toEqual({ speed_kmh: null, length_m: 2300, delay_s: null, level: 2 });
    expect(jam.description).toBe('Kağıthane ile Hasdal arasında - Duran trafik');
  });
});

describe('parseHere: real Zurich sample', async () => {
  const items = parseHere(await readFixture('here-v7-incidents-zurich.json'));
  test('construction with roadClosed=true (code 735) is a closure; the rest are hazards', () => {
    expect(items).toHaveLength(14);
    const closedWorks = byId(items, '2050564027353034723');
    expect(closedWorks.type).toBe('road_closure');
    expect(closedWorks.subtype).toBe('road_closed_construction');
    expect(items.filter((i) => i.type === 'road_closure')).toHaveLength(7);
    expect(items.filter((i) => i.type === 'hazard')).toHaveLength(7);
  });
  test('German text is kept as is', () => {
    expect(byId(items, '4225237232266031355').description).toBe('Bei Gessnerallee - Baustelle');
  });
});

function result(originalId: string, details: Record<string, unknown>, links: unknown = [{ points: [{ lat: 41, lng: 29 }, { lat: 41.001, lng: 29.001 }], length: 140 }]) {
  return {
    location: { length: 140, shape: { links } },
    incidentDetails: {
      id: `${originalId}-u`,
      originalId,
      startTime: '2026-11-21T10:00:00Z',
      endTime: '2026-11-21T12:00:00Z',
      entryTime: '2026-11-21T10:01:00Z',
      roadClosed: false,
      criticality: 'minor',
      type: 'other',
      description: { value: `d ${originalId}`, language: 'en-GB' },
      ...details,
    },
  };
}

describe('parseHere: every mapping row', () => {
  const items = parseHere({
    results: [
      result('closed-accident', { type: 'accident', roadClosed: true, criticality: 'critical' }),
      result('road-closure-type', { type: 'roadClosure', roadClosed: false }),
      result('closed-event', { type: 'plannedEvent', roadClosed: true }),
      result('accident', { type: 'accident', criticality: 'critical' }),
      result('congestion-critical', { type: 'congestion', criticality: 'critical' }),
      result('congestion-major', { type: 'congestion', criticality: 'major' }),
      result('congestion-low', { type: 'congestion', criticality: 'lowImpact' }),
      result('disabled', { type: 'disabledVehicle' }),
      result('road-hazard', { type: 'roadHazard' }),
      result('weather', { type: 'weather' }),
      result('lane', { type: 'laneRestriction' }),
      result('planned-minor', { type: 'plannedEvent', criticality: 'minor' }),
      result('planned-critical', { type: 'plannedEvent', criticality: 'critical' }),
      result('transit-major', { type: 'massTransit', criticality: 'major' }),
      result('other-low', { type: 'other', criticality: 'lowImpact' }),
      result('new-type-major', { type: 'somethingNew', criticality: 'major' }),
      result('constructor-type', { type: 'constructor', criticality: 'minor' }),
      result('no-original', { originalId: undefined, type: 'accident' }),
      result('bad-closed', { type: 'accident', roadClosed: 'yes' }),
      result('no-shape', { type: 'accident' }, []),
      result('bad-point', { type: 'accident' }, [{ points: [{ lat: '41', lng: 29 }] }]),
      result('summary-only', { type: 'accident', description: undefined, summary: { value: 'Kaza', language: 'tr-TR' } }),
    ],
  });
  const has = (id: string) => items.some((i) => i.sourceId === id);

  test('roadClosed or type roadClosure → road_closure, major', () => {
    for (const id of ['closed-accident', 'road-closure-type', 'closed-event']) {
      expect(byId(items, id).type).toBe('road_closure');
      expect(byId(items, id).severity).toBe('major');
    }
    expect(byId(items, 'closed-event').subtype).toBe('road_closed_event');
    expect(byId(items, 'closed-accident').subtype).toBe('road_closed_accident');
    expect(byId(items, 'road-closure-type').subtype).toBeNull();
  });
  test('accident; congestion severity and level from criticality', () => {
    expect(byId(items, 'accident').type).toBe('accident');
    expect(byId(items, 'accident').severity).toBe('major');
    expect(byId(items, 'congestion-critical').severity).toBe('major');
    expect(byId(items, 'congestion-critical').jam?.level).toBe(4);
    expect(byId(items, 'congestion-major').severity).toBe('moderate');
    expect(byId(items, 'congestion-low').severity).toBe('minor');
  });
  test('hazard types and subtypes', () => {
    expect(byId(items, 'disabled').subtype).toBe('hazard_on_road_car_stopped');
    expect(byId(items, 'road-hazard').subtype).toBe('hazard_on_road');
    expect(byId(items, 'weather').subtype).toBe('hazard_weather');
    expect(byId(items, 'lane').subtype).toBe('hazard_on_road_lane_closed');
    for (const id of ['disabled', 'road-hazard', 'weather', 'lane']) expect(byId(items, id).type).toBe('hazard');
  });
  test('plannedEvent / massTransit / other: dropped unless critical or major (then hazard)', () => {
    expect(has('planned-minor')).toBe(false);
    expect(has('other-low')).toBe(false);
    expect(has('constructor-type')).toBe(false);
    expect(byId(items, 'planned-critical').type).toBe('hazard');
    expect(byId(items, 'planned-critical').subtype).toBe('planned_event');
    expect(byId(items, 'transit-major').subtype).toBe('mass_transit');
    expect(byId(items, 'new-type-major').type).toBe('hazard');
  });
  test('falls back to id without originalId; skips wrong types and shapeless items', () => {
    expect(has('no-original-u')).toBe(true);
    expect(has('bad-closed')).toBe(false);
    expect(has('no-shape')).toBe(false);
    expect(has('bad-point')).toBe(false);
  });
  test('a one-point shape gives a location and no geometry; summary when no description', () => {
    const one = parseHere({ results: [result('pt', { type: 'accident' }, [{ points: [{ lat: 41, lng: 29 }] }])] });
    expect(one[0]?.geometry).toBeNull();
    expect(one[0]?.location).toEqual({ lat: 41, lon: 29 });
    expect(byId(items, 'summary-only').description).toBe('Kaza');
  });
  test('odd payloads give no items', () => {
    for (const p of [null, 'x', {}, { results: {} }, { results: [null, 3, {}] }]) expect(parseHere(p)).toEqual([]);
  });
});

// ---------------------------------------------------------------------------------------------

const up = startFakeUpstream();
afterAll(() => up.stop());
beforeEach(() => up.clearRequests());

const KEY = 'here-TEST-KEY-abcdef';
const CELL: Cell = { id: 'ist', bbox: [28.5, 40.8, 29.4, 41.3] };

function source(path: string, now = manualClock().now, timeoutMs = 150): HereSource {
  return new HereSource({ apiKey: KEY, baseUrl: up.url(path), timeoutMs, now, sleep: async () => {}, random: () => 0 });
}

describe('HereSource', () => {
  test('sends in=bbox:west,south,east,north, locationReferencing=shape and apiKey', async () => {
    up.route('/v7/incidents', { file: 'synthetic-here-v7-incidents-istanbul.json' });
    const r = await source('/v7/incidents').fetchCell(CELL);
    expect(r.ok && r.items).toHaveLength(4);
    const q = up.requests[0]?.query;
    expect(q?.get('in')).toBe('bbox:28.5,40.8,29.4,41.3');
    expect(q?.get('locationReferencing')).toBe('shape');
    expect(q?.get('apiKey')).toBe(KEY);
  });

  test('429 with Retry-After: backs off for exactly that long, then closes on success', async () => {
    const clock = manualClock();
    up.route('/here429', { status: 429, headers: { 'retry-after': '120' }, json: { error: 'Too Many Requests' } });
    const s = source('/here429', clock.now);
    const r = await s.fetchCell(CELL);
    expect(!r.ok && r.kind).toBe('blocked');
    expect(r.requests).toBe(1);
    expect(s.status()).toEqual({
      name: 'here',
      state: 'backing_off',
      until: clock.now() + 120_000,
      reason: 'HERE answered 429 (throttled, Retry-After 120 s)',
    });
    expect((await s.fetchCell(CELL)).ok).toBe(false);
    expect(up.count('/here429')).toBe(1);
    clock.advance(119_999);
    expect(s.status().state).toBe('backing_off');
    clock.advance(1);
    up.route('/here429', { file: 'here-v7-incidents-zurich.json' });
    const ok = await s.fetchCell(CELL);
    expect(ok.ok && ok.items).toHaveLength(14);
    expect(s.status().state).toBe('ok');
    expect(JSON.stringify(r)).not.toContain(KEY);
  });

  test('Retry-After is capped at 10 minutes; 503 without one uses 60 s', async () => {
    const clock = manualClock();
    up.route('/here-long', { status: 429, headers: { 'retry-after': '86400' } });
    const a = source('/here-long', clock.now);
    await a.fetchCell(CELL);
    expect(a.status().until).toBe(clock.now() + 600_000);

    up.route('/here503', { status: 503, body: 'unavailable' });
    const b = source('/here503', clock.now);
    const r = await b.fetchCell(CELL);
    expect(!r.ok && r.kind).toBe('blocked');
    expect(r.requests).toBe(1); // a back-off signal is never retried
    expect(b.status().until).toBe(clock.now() + 60_000);
  });

  test('500 retried once then http; timeout; truncated; refused — never leaking the key', async () => {
    up.route('/here500', { status: 500, body: 'x' });
    const e500 = await source('/here500').fetchCell(CELL);
    expect(!e500.ok && e500.kind).toBe('http');
    expect(e500.requests).toBe(2);

    up.route('/hereslow', { delayMs: 400, json: { results: [] } });
    const slow = await source('/hereslow', manualClock().now, 60).fetchCell(CELL);
    expect(!slow.ok && slow.kind).toBe('timeout');

    up.route('/heretrunc', { file: 'here-v7-incidents-zurich.json', truncate: 5000 });
    const trunc = await source('/heretrunc').fetchCell(CELL);
    expect(!trunc.ok && trunc.kind).toBe('parse');

    const refused = await new HereSource({
      apiKey: KEY,
      baseUrl: await refusedUrl('/v7/incidents'),
      timeoutMs: 150,
      now: Date.now,
      sleep: async () => {},
      random: () => 0,
    }).fetchCell(CELL);
    expect(!refused.ok && refused.kind).toBe('network');

    for (const r of [e500, slow, trunc, refused]) {
      expect(!r.ok && r.error).toContain('apiKey=REDACTED');
      expect(JSON.stringify(r)).not.toContain(KEY);
    }
  });

  test('an empty results list is ok', async () => {
    up.route('/hereempty', { json: { sourceUpdated: '2026-11-21T10:00:00Z', results: [] } });
    expect(await source('/hereempty').fetchCell(CELL)).toEqual({ ok: true, items: [], requests: 1 });
  });
});

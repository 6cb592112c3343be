import { afterAll, beforeEach, describe, expect, test } from 'bun:test';
import type { NormalizedItem } from '../../../src/domain/event.ts';
import type { BBox, Cell } from '../../../src/scanner/sources/source.ts';
import {
  parseWaze,
  parseWazeResponse,
  WazeSource,
  type WazeSourceOptions,
} from '../../../src/scanner/sources/waze.ts';
import {
  manualClock,
  readFixture,
  refusedUrl,
  startFakeUpstream,
  type FakeRequest,
} from '../../helpers/fake-upstream.ts';

function byId(items: NormalizedItem[], id: string): NormalizedItem {
  const item = items.find((i) => i.sourceId === id);
  if (!item) throw new Error(`no item ${id} in ${items.map((i) => i.sourceId).join(', ')}`);
  return item;
}

// ---------------------------------------------------------------------------------------------
// Parser
// ---------------------------------------------------------------------------------------------

describe('parseWaze: synthetic Istanbul georss', async () => {
  const items = parseWaze(await readFixture('synthetic-waze-georss-istanbul.json'));

  test('six events: accident, two hazards, the merged closure, two jams', () => {
    expect(items.map((i) => `${i.type}:${i.sourceId}`).sort()).toEqual(
      [
        'accident:c2a1e0f4-3b7d-4e21-9a55-0d6b8f2e7c19',
        'hazard:5be8d6a2-91c4-4f0e-b7d3-2a9e6c1f0b84',
        'hazard:e91f47b3-0c2d-4a6e-8f15-7b3c9d2e4a60',
        'road_closure:7f3c2d1e-8a4b-4c6d-9e0f-1a2b3c4d5e6f',
        'jam:1390247715',
        'jam:1390251022',
      ].sort(),
    );
    for (const i of items) expect(i.source).toBe('waze');
  });

  test('ACCIDENT_MAJOR with reliability 8 → a major accident, all fields', () => {
    expect(byId(items, 'c2a1e0f4-3b7d-4e21-9a55-0d6b8f2e7c19')).toEqual({
      source: 'waze',
      sourceId: 'c2a1e0f4-3b7d-4e21-9a55-0d6b8f2e7c19',
      type: 'accident',
      subtype: 'accident_major',
      severity: 'major',
      location: { lat: 41.066951, lon: 28.994127 },
      geometry: null,
      road: 'D100 / E-5',
      district: 'Şişli',
      description: null,
      jam: null,
      reportedAt: 1741678380000,
      confidence: 0.68, // 0.8 × 8/10 + 0.2 × 2/10
    });
  });

  test('HAZARD subtypes are lower_snake, severity unknown', () => {
    const stopped = byId(items, '5be8d6a2-91c4-4f0e-b7d3-2a9e6c1f0b84');
    expect(stopped.subtype).toBe('hazard_on_shoulder_car_stopped');
    expect(stopped.severity).toBe('unknown');
    expect(byId(items, 'e91f47b3-0c2d-4a6e-8f15-7b3c9d2e4a60').subtype).toBe('hazard_weather_flood');
  });

  test('the level-5 jam is merged into its closure: one event with the jam line as geometry', () => {
    const closure = byId(items, '7f3c2d1e-8a4b-4c6d-9e0f-1a2b3c4d5e6f');
    expect(closure.type).toBe('road_closure');
    expect(closure.subtype).toBe('road_closed_construction');
    expect(closure.severity).toBe('major');
    expect(closure.location).toEqual({ lat: 40.984713, lon: 29.026842 });
    expect(closure.geometry).toEqual({
      type: 'LineString',
      coordinates: [
        [29.026842, 40.984713],
        [29.026611, 40.983905],
        [29.026402, 40.983122],
      ],
    });
    expect(closure.description).toBe('Altyapı çalışması');
    expect(closure.reportedAt).toBe(1741419720000);
    expect(closure.jam).toBeNull();
    expect(items.some((i) => i.sourceId === '1388802277' || i.sourceId.includes('1388802277'))).toBe(false);
  });

  test('jams[]: level 4 → major, level 3 → moderate, with line, details and first point', () => {
    const d100 = byId(items, '1390247715');
    expect(d100.severity).toBe('major');
    expect(d100.subtype).toBeNull();
    expect(d100.jam).toEqual({ speed_kmh: 7.82, length_m: 612, delay_s: 244, level: 4 });
    expect(d100.location).toEqual({ lon: 28.990215, lat: 41.066102 });
    expect(d100.geometry?.coordinates).toHaveLength(4);
    expect(d100.road).toBe('D100 / E-5');
    expect(d100.reportedAt).toBe(1741678500000);
    expect(d100.confidence).toBe(0.9);
    expect(byId(items, '1390251022').severity).toBe('moderate');
  });

  test('POLICE is dropped; the JAM alert on the O-1 jam line is merged into the jam', () => {
    expect(items.some((i) => i.sourceId === 'a7b6c5d4-e3f2-4a1b-8c9d-0e1f2a3b4c5d')).toBe(false);
    expect(items.some((i) => i.sourceId === '0d4e7a9b-2f61-4c38-a0e5-9b8c1d3f6e27')).toBe(false);
  });
});

describe('parseWaze: real Santiago georss', async () => {
  const payload = await readFixture('waze-georss-santiago.json');
  const items = parseWaze(payload);

  test('10 alerts + 3 jams; the blocked jam is merged into ROAD_CLOSED_EVENT', () => {
    expect(items).toHaveLength(13);
    const closure = byId(items, '82e29c40-2f95-40fb-a4d6-ffc0eccd97a9');
    expect(closure.type).toBe('road_closure');
    expect(closure.subtype).toBe('road_closed_event');
    expect(closure.geometry?.coordinates).toEqual([
      [-70.675228, -33.451757],
      [-70.673875, -33.451445],
    ]);
    expect(items.some((i) => i.sourceId === '140856638')).toBe(false);
  });

  test('level 2 jams are minor', () => {
    expect(byId(items, '785732436').severity).toBe('minor');
    expect(byId(items, '785732436').jam?.level).toBe(2);
  });

  test('authority construction hazards carry their description', () => {
    const h = byId(items, '5491432f-69a4-4d66-9b4e-a7fcf779cfac');
    expect(h.subtype).toBe('hazard_on_road_construction');
    expect(h.description).toBe('MEJORAMIENTO CICLOVÍA ALAMEDA, pista Izquierda');
    expect(h.confidence).toBe(0.9);
  });

  test('users[], comments and wazeData never come out', () => {
    const out = JSON.stringify(items);
    expect(out).not.toContain('user-0');
    expect(out).not.toContain('guest');
    expect(out).not.toContain('reportMillis');
    expect(out).not.toContain('world,');
  });

  test('the alert count is the raw number of alerts', () => {
    expect(parseWazeResponse(payload).alertCount).toBe(10);
  });
});

describe('parseWaze: partner feed (NYC)', async () => {
  const items = parseWaze(await readFixture('waze-partner-feed-nyc.json'));
  test('WEATHERHAZARD → hazard; "District, State" city → district', () => {
    const h = byId(items, '03769afc-d16d-376a-b5ed-628ade6beedf');
    expect(h.type).toBe('hazard');
    expect(h.district).toBe('Staten Island');
    expect(h.confidence).toBe(0.48);
    expect(byId(items, 'bb53aa5b-ef97-33f5-8b3a-84a4a7dfadf4').district).toBeNull();
  });
  test('irregularities and their nested alerts are not events', () => {
    expect(items).toHaveLength(4);
    expect(items.some((i) => i.sourceId === '7334deee-9be5-3129-8828-2ebc9e4e8f4b')).toBe(false);
  });
});

describe('parseWaze: every mapping row (synthetic Ankara cases)', async () => {
  const payload = await readFixture('synthetic-waze-mapping-cases-ankara.json');
  const items = parseWaze(payload);
  const id = (n: number) => `a1000000-0000-4000-8000-0000000000${String(n).padStart(2, '0')}`;
  const has = (sid: string) => items.some((i) => i.sourceId === sid);

  test('the expected thirteen events', () => {
    expect(items.map((i) => i.sourceId).sort()).toEqual(
      [
        '2000000001',
        '2000000006',
        '2000000008',
        id(14),
        'b2000000-0000-4000-8000-00000000000a',
        'c3000000-0000-4000-8000-00000000000b',
        id(1),
        id(2),
        id(7),
        id(8),
        id(9),
        id(10),
        id(11),
      ].sort(),
    );
  });

  test('WEATHERHAZARD and CONSTRUCTION → hazard; an empty subtype → null', () => {
    expect(byId(items, id(1)).type).toBe('hazard');
    expect(byId(items, id(1)).subtype).toBe('hazard_weather_fog');
    expect(byId(items, id(2)).type).toBe('hazard');
    expect(byId(items, id(2)).subtype).toBeNull();
  });

  test('CHIT_CHAT, MISC and POLICE are dropped', () => {
    expect(has(id(3))).toBe(false);
    expect(has(id(4))).toBe(false);
    expect(has(id(5))).toBe(false);
  });

  test('noise floor: reliability 3 dropped; reliability 2 kept when reportBy is set', () => {
    expect(has(id(6))).toBe(false);
    const pothole = byId(items, id(7));
    expect(pothole.subtype).toBe('hazard_on_road_pot_hole');
    expect(pothole.description).toBe('Yolda çukur');
  });

  test('accident severity from subtype and reliability', () => {
    expect(byId(items, id(8)).severity).toBe('minor'); // ACCIDENT_MINOR
    expect(byId(items, id(9)).severity).toBe('moderate'); // ACCIDENT_MAJOR, reliability 5: unconfirmed
    expect(byId(items, id(10)).severity).toBe('unknown'); // no subtype
    expect(byId(items, id(10)).subtype).toBeNull();
    expect(byId(items, id(8)).district).toBe('Çankaya');
    expect(byId(items, id(10)).district).toBe('Keçiören');
  });

  test('JAM alerts: kept (far, reliability 7), dropped (reliability 4), merged (30 m from a jam line)', () => {
    const kept = byId(items, id(11));
    expect(kept.type).toBe('jam');
    expect(kept.subtype).toBe('jam_stand_still_traffic');
    expect(kept.severity).toBe('major');
    expect(kept.jam).toEqual({ speed_kmh: null, length_m: null, delay_s: null, level: 4 });
    expect(has(id(12))).toBe(false);
    expect(has(id(13))).toBe(false);
  });

  test('a closure under the noise floor is kept when its blocked jam confirms it', () => {
    const c = byId(items, id(14));
    expect(c.type).toBe('road_closure');
    expect(c.subtype).toBe('road_closed_hazard');
    expect(c.geometry?.coordinates).toHaveLength(3);
    expect(c.district).toBeNull(); // empty city
    expect(has('2000000003')).toBe(false);
  });

  test('a blocked jam whose alert is absent: built from causeAlert, else from the jam itself', () => {
    const fromCause = byId(items, 'b2000000-0000-4000-8000-00000000000a');
    expect(fromCause.type).toBe('road_closure');
    expect(fromCause.subtype).toBe('road_closed_event');
    expect(fromCause.description).toBe('Tören');
    expect(fromCause.location).toEqual({ lon: 32.91, lat: 39.94 });
    expect(fromCause.geometry?.coordinates).toEqual([
      [32.91, 39.94],
      [32.911, 39.939],
    ]);
    const fromJam = byId(items, 'c3000000-0000-4000-8000-00000000000b');
    expect(fromJam.type).toBe('road_closure');
    expect(fromJam.subtype).toBe('road_closed_construction');
    expect(fromJam.severity).toBe('major');
    expect(fromJam.road).toBe('Anafartalar Cd.');
    expect(fromJam.district).toBe('Altındağ');
    expect(fromJam.location).toEqual({ lon: 32.92, lat: 39.95 });
    expect(has('2000000004')).toBe(false);
    expect(has('2000000005')).toBe(false);
  });

  test('jams: level 1 dropped; level 5 without an alert is a major jam with no finite delay; id-only jam', () => {
    expect(has('2000000002')).toBe(false);
    const blocked = byId(items, '2000000006');
    expect(blocked.type).toBe('jam');
    expect(blocked.severity).toBe('major');
    expect(blocked.jam).toEqual({ speed_kmh: 0, length_m: 120, delay_s: null, level: 5 });
    const idOnly = byId(items, '2000000008');
    expect(idOnly.severity).toBe('moderate');
    expect(idOnly.jam).toEqual({ speed_kmh: 17.2, length_m: 650, delay_s: 95, level: 3 });
    expect(byId(items, '2000000001').severity).toBe('minor');
  });

  test('records with a field of the wrong type are skipped, not thrown', () => {
    expect(has(id(15))).toBe(false); // location.x is a string
    expect(has(id(16))).toBe(false); // reliability is a string
    expect(has('2000000007')).toBe(false); // a line point with a string x
  });

  test('no user names, comments or wazeData in the output', () => {
    const out = JSON.stringify(items);
    expect(out).not.toContain('guest-private-name');
    expect(out).not.toContain('secret comment text');
    expect(out).not.toContain('world,');
  });
});

describe('parseWaze: defensive', () => {
  test('odd payloads give no items instead of throwing', () => {
    for (const p of [null, 42, 'x', [], {}, { alerts: 'nope', jams: {} }, { alerts: [null, 1, 'a', []] }]) {
      expect(parseWaze(p)).toEqual([]);
    }
  });
  test('missing arrays default to empty; a missing pubMillis skips the alert', () => {
    const a = { uuid: 'u1', type: 'ACCIDENT', subtype: 'ACCIDENT_MINOR', location: { x: 29, y: 41 }, reliability: 9 };
    expect(parseWaze({ alerts: [a] })).toEqual([]);
    expect(parseWaze({ alerts: [{ ...a, pubMillis: 1 }] })).toHaveLength(1);
  });
  test('a JAM alert with reportBy but low reliability is still dropped; the same id twice is one item', () => {
    const jam = { uuid: 'j', type: 'JAM', subtype: 'JAM_HEAVY_TRAFFIC', location: { x: 29, y: 41 }, reliability: 3, reportBy: 'X', pubMillis: 1 };
    expect(parseWaze({ alerts: [jam] })).toEqual([]);
    const acc = { uuid: 'd', type: 'ACCIDENT', subtype: '', location: { x: 29, y: 41 }, reliability: 9, pubMillis: 1 };
    expect(parseWaze({ alerts: [acc, acc] })).toHaveLength(1);
  });
});

// ---------------------------------------------------------------------------------------------
// Source against a local fake upstream
// ---------------------------------------------------------------------------------------------

const up = startFakeUpstream();
afterAll(() => up.stop());
beforeEach(() => up.clearRequests());

const CELL: Cell = { id: 'r05c12', bbox: [28, 40, 30, 42] };

function source(path: string, extra: Partial<WazeSourceOptions> = {}): WazeSource {
  const clock = manualClock();
  return new WazeSource({
    baseUrl: up.url(path),
    timeoutMs: 150,
    now: clock.now,
    sleep: async () => {},
    random: () => 0,
    ...extra,
  });
}

function bboxOf(req: FakeRequest): BBox {
  const q = req.query;
  return [Number(q.get('left')), Number(q.get('bottom')), Number(q.get('right')), Number(q.get('top'))];
}

/** `n` confirmed hazards spread inside `bbox`, ids `${prefix}-<i>`. */
function alerts(n: number, bbox: BBox, prefix: string) {
  const [w, s, e, nn] = bbox;
  return Array.from({ length: n }, (_, i) => ({
    uuid: `${prefix}-${i}`,
    type: 'HAZARD',
    subtype: 'HAZARD_ON_ROAD_OBJECT',
    location: { x: w + ((e - w) * (i + 0.5)) / n, y: s + ((nn - s) * (i + 0.5)) / n },
    reliability: 9,
    confidence: 5,
    pubMillis: 1_763_719_200_000,
  }));
}

const key = (b: BBox) => b.join(',');

describe('WazeSource', () => {
  test('requests georss with top/bottom/left/right, env=row and types=alerts,traffic', async () => {
    up.route('/georss-basic', { file: 'synthetic-waze-georss-istanbul.json' });
    const r = await source('/georss-basic').fetchCell({ id: 'ist', bbox: [28.5, 40.8, 29.5, 41.3] });
    expect(r.ok).toBe(true);
    expect(r.ok && r.items).toHaveLength(6);
    expect(r.requests).toBe(1);
    const q = up.requests[0]?.query;
    expect(q?.get('top')).toBe('41.3');
    expect(q?.get('bottom')).toBe('40.8');
    expect(q?.get('left')).toBe('28.5');
    expect(q?.get('right')).toBe('29.5');
    expect(q?.get('env')).toBe('row');
    expect(q?.get('types')).toBe('alerts,traffic');
    expect(up.requests[0]?.url.search).toContain('types=alerts,traffic');
    expect(up.requests[0]?.headers.get('accept')).toContain('application/json');
  });

  test('199 alerts: no subdivision', async () => {
    up.route('/georss-199', (req) => ({ json: { alerts: alerts(199, bboxOf(req), 'a') } }));
    const s = source('/georss-199');
    const r = await s.fetchCell(CELL);
    expect(r.ok && r.items).toHaveLength(199);
    expect(r.requests).toBe(1);
    expect(s.splitOf(CELL.id)).toBeNull();
  });

  test('exactly 200 alerts: split into 4 quadrants, dedupe by id, and remember the split', async () => {
    const quads = new Set(
      [
        [28, 40, 29, 41],
        [29, 40, 30, 41],
        [28, 41, 29, 42],
        [29, 41, 30, 42],
      ].map((b) => key(b as BBox)),
    );
    up.route('/georss-200', (req) => {
      const b = bboxOf(req);
      if (key(b) === key(CELL.bbox)) return { json: { alerts: alerts(200, b, 'parent') } };
      if (!quads.has(key(b))) return { status: 400, json: { error: `unexpected bbox ${key(b)}` } };
      // 60 per quadrant, plus one alert every quadrant sees (it lies on the shared corner).
      const shared = { ...alerts(1, [29, 41, 29, 41], 'shared')[0], uuid: 'shared-corner' };
      return { json: { alerts: [...alerts(60, b, `q${key(b)}`), shared] } };
    });
    const s = source('/georss-200');
    const r = await s.fetchCell(CELL);
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect(r.requests).toBe(5);
    expect(r.items).toHaveLength(4 * 60 + 1);
    expect(new Set(r.items.map((i) => i.sourceId)).size).toBe(r.items.length);
    expect(r.items.some((i) => i.sourceId.startsWith('parent-'))).toBe(false);
    expect(new Set(up.requests.slice(1).map((q) => key(bboxOf(q))))).toEqual(quads);
    expect(s.splitOf(CELL.id)?.map(key).sort()).toEqual([...quads].sort());

    // The next scan asks the quadrants directly, never the parent box.
    up.clearRequests();
    const again = await s.fetchCell(CELL);
    expect(again.ok && again.items).toHaveLength(241);
    expect(again.requests).toBe(4);
    expect(up.requests.some((q) => key(bboxOf(q)) === key(CELL.bbox))).toBe(false);
  });

  test('a remembered split collapses back once the quadrants hold under half the cap', async () => {
    let quadrantAlerts = 60;
    up.route('/georss-collapse', (req) => {
      const b = bboxOf(req);
      if (key(b) === key(CELL.bbox)) return { json: { alerts: alerts(200, b, 'p') } };
      return { json: { alerts: alerts(quadrantAlerts, b, `q${key(b)}`) } };
    });
    const s = source('/georss-collapse');
    expect((await s.fetchCell(CELL)).requests).toBe(5);
    quadrantAlerts = 10; // the rush hour is over: 40 < 100
    expect((await s.fetchCell(CELL)).requests).toBe(4);
    expect(s.splitOf(CELL.id)).toBeNull();
    up.clearRequests();
    const third = await s.fetchCell(CELL);
    expect(third.requests).toBe(5); // the parent is full again in this fake, so it splits again
    expect(key(bboxOf(up.requests[0] as FakeRequest))).toBe(key(CELL.bbox));
  });

  test('subdivision stops at depth 3', async () => {
    up.route('/georss-deep', (req) => ({ json: { alerts: alerts(200, bboxOf(req), key(bboxOf(req))) } }));
    const s = source('/georss-deep');
    const r = await s.fetchCell(CELL);
    expect(r.ok).toBe(true);
    expect(r.requests).toBe(1 + 4 + 16 + 64);
    expect(s.splitOf(CELL.id)).toHaveLength(64);
  });

  test('a failed quadrant fails the whole cell (its events must not expire)', async () => {
    up.route('/georss-partial', (req) => {
      const b = bboxOf(req);
      if (key(b) === key(CELL.bbox)) return { json: { alerts: alerts(200, b, 'p') } };
      if (key(b) === '29,41,30,42') return { body: '{"alerts":[', headers: { 'content-type': 'application/json' } };
      return { json: { alerts: alerts(5, b, key(b)) } };
    });
    const r = await source('/georss-partial').fetchCell(CELL);
    expect(r.ok).toBe(false);
    expect(!r.ok && r.kind).toBe('parse');
    expect(r.requests).toBe(5);
  });

  test('403 opens the source-wide back-off: no request while open, status backing_off, closes after a success', async () => {
    const clock = manualClock();
    up.route('/georss-403', { status: 403, html: '<html>Access denied</html>' });
    const s = source('/georss-403', { now: clock.now });
    const first = await s.fetchCell(CELL);
    expect(!first.ok && first.kind).toBe('blocked');
    expect(first.requests).toBe(1); // a block is never retried
    const st = s.status();
    expect(st.name).toBe('waze');
    expect(st.state).toBe('backing_off');
    expect(st.until).toBe(clock.now() + 60_000);
    expect(st.reason).toContain('403');

    const second = await s.fetchCell({ id: 'other', bbox: [30, 40, 32, 42] });
    expect(!second.ok && second.kind).toBe('backoff');
    expect(second.requests).toBe(0);
    expect(up.count('/georss-403')).toBe(1);

    // Still blocked after the first period: re-opens for twice as long.
    clock.advance(60_000);
    expect((await s.fetchCell(CELL)).ok).toBe(false);
    expect(s.status().until).toBe(clock.now() + 120_000);

    // Unblocked: the probe succeeds and the breaker closes.
    clock.advance(120_000);
    up.route('/georss-403', { file: 'synthetic-waze-georss-istanbul.json' });
    const ok = await s.fetchCell(CELL);
    expect(ok.ok).toBe(true);
    expect(s.status()).toEqual({ name: 'waze', state: 'ok', until: null, reason: null });
  });

  test('an HTML 200 (bot wall) also opens the back-off', async () => {
    const clock = manualClock();
    up.route('/georss-html', { html: '<!doctype html><title>reCAPTCHA</title>' });
    const s = source('/georss-html', { now: clock.now });
    const r = await s.fetchCell(CELL);
    expect(!r.ok && r.kind).toBe('blocked');
    expect(s.status().state).toBe('backing_off');
    expect(s.status().reason).toContain('HTML');
    expect((await s.fetchCell(CELL)).ok).toBe(false);
    expect(up.count('/georss-html')).toBe(1);
  });

  test('500 is retried once then fails as http; the back-off stays closed', async () => {
    up.route('/georss-500', { status: 500, json: { error: 'x' } });
    const s = source('/georss-500');
    const r = await s.fetchCell(CELL);
    expect(!r.ok && r.kind).toBe('http');
    expect(r.requests).toBe(2);
    expect(s.status().state).toBe('ok');
  });

  test('timeout, truncated JSON, connection refused', async () => {
    up.route('/georss-slow', { delayMs: 500, file: 'synthetic-waze-georss-istanbul.json' });
    const slow = await source('/georss-slow', { timeoutMs: 60 }).fetchCell(CELL);
    expect(!slow.ok && slow.kind).toBe('timeout');

    up.route('/georss-trunc', { file: 'synthetic-waze-georss-istanbul.json', truncate: 1000 });
    const trunc = await source('/georss-trunc').fetchCell(CELL);
    expect(!trunc.ok && trunc.kind).toBe('parse');

    const refused = await new WazeSource({
      baseUrl: await refusedUrl('/georss'),
      timeoutMs: 150,
      now: Date.now,
      sleep: async () => {},
      random: () => 0,
    }).fetchCell(CELL);
    expect(!refused.ok && refused.kind).toBe('network');
  });

  test('an empty 200 is a valid "nothing here"', async () => {
    up.route('/georss-empty', { json: { startTimeMillis: 1, endTimeMillis: 2 } });
    const r = await source('/georss-empty').fetchCell(CELL);
    expect(r).toEqual({ ok: true, items: [], requests: 1 });
  });

  test('never more than 2 requests in flight', async () => {
    up.route('/georss-conc', { delayMs: 25, json: { alerts: [] } });
    const s = source('/georss-conc');
    expect(s.concurrency).toBe(2);
    const cells = Array.from({ length: 6 }, (_, i): Cell => ({ id: `c${i}`, bbox: [i, 40, i + 1, 41] }));
    const results = await Promise.all(cells.map((c) => s.fetchCell(c)));
    expect(results.every((r) => r.ok)).toBe(true);
    expect(up.maxInFlight('/georss-conc')).toBe(2);
  });
});

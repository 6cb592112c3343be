/**
 * What the scanner tests share: a handful of hand-made cells, a fake "map" served by a real local
 * HTTP server in the Waze and TomTom schemas (a cell's answer holds what lies in its bbox, like the
 * real upstreams), replay directories, and a harness running `runScan` on a real SQLite file with
 * a manual clock.
 */
import { mkdirSync, mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { asc } from 'drizzle-orm';
import { openDatabase, type OpenedDb } from '../../src/db/client.ts';
import { eventChanges, events, scanRuns, type EventChangeRow, type EventRow, type ScanRunRow } from '../../src/db/schema/index.ts';
import type { SourceName } from '../../src/domain/event.ts';
import { silentLogger } from '../../src/log.ts';
import { eventIdFor } from '../../src/scanner/event-id.ts';
import { runScan, type ScannerDeps, type ScanSummary } from '../../src/scanner/scan.ts';
import type { ReplayKind } from '../../src/scanner/sources/replay.ts';
import type { BBox, Cell, Source } from '../../src/scanner/sources/source.ts';
import { TomTomSource } from '../../src/scanner/sources/tomtom.ts';
import { WazeSource, type WazeSourceOptions } from '../../src/scanner/sources/waze.ts';
import { manualClock, startFakeUpstream, type FakeHandler, type FakeRequest, type FakeUpstream, type ManualClock } from './fake-upstream.ts';
import type { TestApp } from './app.ts';
import { tempDb, type TempDb } from './db.ts';

/** Small cells inside Türkiye; `ist` and `ist2` overlap on lon 29.00–29.10. `gre` is in Greece. */
export const CELLS = {
  ist: { id: 'ist', bbox: [28.8, 40.95, 29.1, 41.15] },
  ist2: { id: 'ist2', bbox: [29.0, 40.95, 29.3, 41.15] },
  ank: { id: 'ank', bbox: [32.6, 39.8, 33.0, 40.05] },
  izm: { id: 'izm', bbox: [26.9, 38.3, 27.3, 38.55] },
  gre: { id: 'gre', bbox: [22.8, 40.5, 23.1, 40.75] },
} as const satisfies Record<string, Cell>;

/** Points inside the cells above (checked against the province polygons). */
export const PLACES = {
  sisli: { lat: 41.0602, lon: 28.9877 }, // İstanbul, in `ist` only
  besiktas: { lat: 41.045, lon: 29.05 }, // İstanbul, in the `ist`/`ist2` overlap
  umraniye: { lat: 41.025, lon: 29.15 }, // İstanbul, in `ist2` only
  kizilay: { lat: 39.92, lon: 32.854 }, // Ankara
  konak: { lat: 38.415, lon: 27.125 }, // İzmir
  thessaloniki: { lat: 40.64, lon: 22.94 }, // Greece: outside Türkiye
} as const;

export function cells(...ids: (keyof typeof CELLS)[]): Cell[] {
  return ids.map((id) => CELLS[id]);
}

function sameBBox(a: readonly number[], b: readonly number[]): boolean {
  return a.length === b.length && a.every((v, i) => Math.abs(v - b[i]!) < 1e-6);
}

function inside(lat: number, lon: number, bbox: readonly number[]): boolean {
  const [minLon, minLat, maxLon, maxLat] = bbox as BBox;
  return lon >= minLon && lon <= maxLon && lat >= minLat && lat <= maxLat;
}

type JsonObject = Record<string, unknown>;

/** Where a payload record lies: a Waze alert's location, a jam's first point, a TomTom geometry's first position. */
function positionOf(kind: 'alert' | 'jam' | 'tomtom', rec: JsonObject): { lat: number; lon: number } {
  if (kind === 'alert') {
    const l = rec.location as { x: number; y: number };
    return { lat: l.y, lon: l.x };
  }
  if (kind === 'jam') {
    const p = (rec.line as { x: number; y: number }[])[0]!;
    return { lat: p.y, lon: p.x };
  }
  const g = rec.geometry as { type: string; coordinates: unknown };
  const c = (g.type === 'Point' ? g.coordinates : (g.coordinates as unknown[])[0]) as [number, number];
  return { lat: c[1], lon: c[0] };
}

/**
 * A fake upstream map: Waze (`/georss`) and TomTom (`/incidentDetails`) answer each cell with the
 * records that lie in its bbox. `override` makes one cell of one source answer something else
 * (a status, an HTML wall, truncated JSON, a slow answer).
 */
export interface UpstreamWorld {
  fake: FakeUpstream;
  clock: ManualClock;
  waze: { alerts: JsonObject[]; jams: JsonObject[] };
  tomtom: JsonObject[];
  override(source: 'waze' | 'tomtom', cellId: string, reply: FakeHandler | null): void;
  /** Requests the cell received from `source` since the last `clearRequests`. */
  requests(source: 'waze' | 'tomtom', cellId: string): number;
  wazeSource(over?: Partial<WazeSourceOptions>): WazeSource;
  tomtomSource(): TomTomSource;
  stop(): Promise<void>;
}

export const WAZE_PATH = '/georss';
export const TOMTOM_PATH = '/incidentDetails';

export function startWorld(cellList: readonly Cell[], clock: ManualClock = manualClock()): UpstreamWorld {
  const fake = startFakeUpstream();
  const overrides = new Map<string, FakeHandler>();
  const waze = { alerts: [] as JsonObject[], jams: [] as JsonObject[] };
  const tomtom: JsonObject[] = [];

  const wazeBBox = (q: URLSearchParams): number[] => ['left', 'bottom', 'right', 'top'].map((k) => Number(q.get(k)));
  const tomtomBBox = (q: URLSearchParams): number[] => (q.get('bbox') ?? '').split(',').map(Number);
  const cellFor = (bbox: number[]) => cellList.find((c) => sameBBox(c.bbox, bbox));

  const answer = (source: 'waze' | 'tomtom', req: FakeRequest): FakeHandler => {
    const bbox = source === 'waze' ? wazeBBox(req.query) : tomtomBBox(req.query);
    const cell = cellFor(bbox);
    const o = cell && overrides.get(`${source}:${cell.id}`);
    if (o) return o;
    if (source === 'waze') {
      return {
        json: {
          alerts: waze.alerts.filter((a) => { const p = positionOf('alert', a); return inside(p.lat, p.lon, bbox); }),
          jams: waze.jams.filter((j) => { const p = positionOf('jam', j); return inside(p.lat, p.lon, bbox); }),
          startTimeMillis: clock.now() - 60_000,
          endTimeMillis: clock.now(),
        },
      };
    }
    return { json: { incidents: tomtom.filter((t) => { const p = positionOf('tomtom', t); return inside(p.lat, p.lon, bbox); }) } };
  };
  const resolve = async (source: 'waze' | 'tomtom', req: FakeRequest) => {
    const h = answer(source, req);
    return typeof h === 'function' ? h(req) : h;
  };
  fake.route(WAZE_PATH, (req) => resolve('waze', req));
  fake.route(TOMTOM_PATH, (req) => resolve('tomtom', req));

  const noSleep = async () => {};
  return {
    fake,
    clock,
    waze,
    tomtom,
    override(source, cellId, reply) {
      if (reply === null) overrides.delete(`${source}:${cellId}`);
      else overrides.set(`${source}:${cellId}`, reply);
    },
    requests(source, cellId) {
      const cell = cellList.find((c) => c.id === cellId);
      if (!cell) return 0;
      return fake.requests.filter((r) =>
        source === 'waze' ? r.path === WAZE_PATH && sameBBox(wazeBBox(r.query), cell.bbox) : r.path === TOMTOM_PATH && sameBBox(tomtomBBox(r.query), cell.bbox),
      ).length;
    },
    wazeSource: (over = {}) =>
      new WazeSource({ baseUrl: fake.url(WAZE_PATH), now: clock.now, sleep: noSleep, random: () => 0.5, timeoutMs: 2000, concurrency: 1, ...over }),
    tomtomSource: () =>
      new TomTomSource({ baseUrl: fake.url(TOMTOM_PATH), apiKey: 'test-key', now: clock.now, sleep: noSleep, random: () => 0.5, timeoutMs: 2000, concurrency: 1 }),
    stop: () => fake.stop(),
  };
}

/** A replay directory whose recordings tests rewrite between scans (atomically: a new inode each time). */
export interface ReplayDir {
  dir: string;
  write(kind: ReplayKind, name: string, payload: unknown): void;
  remove(kind: ReplayKind, name: string): void;
  cleanup(): void;
}

export function replayDir(): ReplayDir {
  const dir = mkdtempSync(join(tmpdir(), 'trafik-replay-'));
  let n = 0;
  return {
    dir,
    write(kind, name, payload) {
      mkdirSync(join(dir, kind), { recursive: true });
      const tmp = join(dir, `.tmp-${n++}`);
      writeFileSync(tmp, typeof payload === 'string' ? payload : JSON.stringify(payload));
      renameSync(tmp, join(dir, kind, name));
    },
    remove(kind, name) {
      rmSync(join(dir, kind, name), { force: true });
    },
    cleanup() {
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * `runScan` on a real SQLite file: the scanner writes on its own connection (as `serve` does) and
 * the test reads through the main one.
 */
export interface ScanHarness {
  db: TempDb;
  writer: OpenedDb;
  clock: ManualClock;
  scan(sources: readonly Source[], cellList: readonly Cell[], over?: Partial<ScannerDeps>): Promise<ScanSummary>;
  events(): EventRow[];
  /** The stored event of an upstream item, by source and upstream id. */
  event(source: SourceName, sourceId: string): EventRow | undefined;
  changes(): EventChangeRow[];
  runs(): ScanRunRow[];
  cleanup(): void;
}

export function scanHarness(clock: ManualClock = manualClock(), db: TempDb = tempDb()): ScanHarness {
  const writer = openDatabase(db.path);
  return {
    db,
    writer,
    clock,
    scan: (sources, cellList, over = {}) =>
      runScan({ writer: writer.sqlite, sources, cells: cellList, clock: clock.now, logger: silentLogger, ...over }),
    events: () => db.db.select().from(events).orderBy(asc(events.id)).all(),
    event: (source, sourceId) => db.db.select().from(events).all().find((e) => e.id === eventIdFor(source, sourceId)),
    changes: () => db.db.select().from(eventChanges).orderBy(asc(eventChanges.seq)).all(),
    runs: () => db.db.select().from(scanRuns).orderBy(asc(scanRuns.id)).all(),
    cleanup() {
      try {
        writer.sqlite.close();
      } catch {}
      db.cleanup();
    },
  };
}

/**
 * A harness on the database of a test app (test/helpers/app.ts), sharing its fake clock: scans
 * write what the app's read model and routes then serve. Clean up through the harness.
 */
export function scanHarnessOn(t: TestApp): ScanHarness {
  const clock: ManualClock = {
    now: () => t.clock.now,
    advance: (ms) => {
      t.clock.now += ms;
    },
    set: (ms) => {
      t.clock.now = ms;
    },
  };
  const h = scanHarness(clock, t.db);
  return {
    ...h,
    cleanup() {
      t.cleanup();
      h.cleanup();
    },
  };
}

/** A promise with its resolve/reject exposed. */
export function deferred<T = void>(): { promise: Promise<T>; resolve: (v: T) => void; reject: (e: unknown) => void } {
  let resolve!: (v: T) => void;
  let reject!: (e: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

/**
 * Small, framework-free helpers shared by the source adapters: defensive readers for `unknown`
 * JSON, normalisation of names and numbers, and a little geometry.
 *
 * The field readers follow one rule: an absent field (`undefined` or `null`) is `undefined`; a
 * present field of the wrong type throws {@link FieldTypeError}. Each record's reader is wrapped in
 * {@link recordReader}, which catches that error and skips the item, so one odd upstream record
 * never throws out of a parser nor poisons the rest.
 */
import type { LatLon, LineString, NormalizedItem } from '../../domain/event.ts';
import type { BBox } from './source.ts';

export type JsonRecord = Record<string, unknown>;

export function isRecord(value: unknown): value is JsonRecord {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A present field had the wrong type; the item that holds it is skipped. */
export class FieldTypeError extends Error {
  constructor(field: string, expected: string) {
    super(`field "${field}" is not ${expected}`);
    this.name = 'FieldTypeError';
  }
}

export function optString(obj: JsonRecord, key: string): string | undefined {
  const v = obj[key];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'string') throw new FieldTypeError(key, 'a string');
  return v;
}

/** A finite number (NaN and ±Infinity count as the wrong type). */
export function optNumber(obj: JsonRecord, key: string): number | undefined {
  const v = obj[key];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'number' || !Number.isFinite(v)) throw new FieldTypeError(key, 'a finite number');
  return v;
}

export function optBoolean(obj: JsonRecord, key: string): boolean | undefined {
  const v = obj[key];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'boolean') throw new FieldTypeError(key, 'a boolean');
  return v;
}

export function optArray(obj: JsonRecord, key: string): unknown[] | undefined {
  const v = obj[key];
  if (v === undefined || v === null) return undefined;
  if (!Array.isArray(v)) throw new FieldTypeError(key, 'an array');
  return v;
}

export function optRecord(obj: JsonRecord, key: string): JsonRecord | undefined {
  const v = obj[key];
  if (v === undefined || v === null) return undefined;
  if (!isRecord(v)) throw new FieldTypeError(key, 'an object');
  return v;
}

export function reqString(obj: JsonRecord, key: string): string {
  const v = optString(obj, key);
  if (v === undefined || v.trim() === '') throw new FieldTypeError(key, 'a non-empty string');
  return v;
}

export function reqRecord(obj: JsonRecord, key: string): JsonRecord {
  const v = optRecord(obj, key);
  if (v === undefined) throw new FieldTypeError(key, 'an object');
  return v;
}

/**
 * The reader of one upstream record, made safe: a record that is not an object, or that has a
 * present field of the wrong type ({@link FieldTypeError}), reads as null and is skipped.
 */
export function recordReader<T>(read: (raw: JsonRecord) => T | null): (raw: unknown) => T | null {
  return (raw) => {
    if (!isRecord(raw)) return null;
    try {
      return read(raw);
    } catch (err) {
      if (err instanceof FieldTypeError) return null;
      throw err;
    }
  };
}

/** The items of a payload's top-level array, each record read by `read` (null skips it), deduplicated. */
export function readTopItems(payload: unknown, key: string, read: (raw: unknown) => NormalizedItem | null): NormalizedItem[] {
  return dedupeItems(
    topArray(payload, key)
      .map(read)
      .filter((i): i is NormalizedItem => i !== null),
  );
}

/** A top-level array of the payload; a missing or mistyped one is an empty list. */
export function topArray(payload: unknown, key: string): unknown[] {
  if (!isRecord(payload)) return [];
  const v = payload[key];
  return Array.isArray(v) ? v : [];
}

/** A table lookup that ignores inherited keys (`constructor`, `__proto__`…) of untrusted input. */
export function lookup<V>(table: Readonly<Record<string, V>>, key: string | number | null | undefined): V | undefined {
  if (key === null || key === undefined) return undefined;
  const k = String(key);
  return Object.hasOwn(table, k) ? table[k] : undefined;
}

/** Trimmed text, `null` when empty. */
export function text(value: string | undefined): string | null {
  if (value === undefined) return null;
  const t = value.trim();
  return t === '' ? null : t;
}

/** `ACCIDENT_MAJOR` → `accident_major`, `Hazard on road` → `hazard_on_road`; `null` if empty. */
export function lowerSnake(value: string | undefined | null): string | null {
  if (value === undefined || value === null) return null;
  const s = value
    .trim()
    .replace(/([a-z0-9])([A-Z])/g, '$1_$2')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '_')
    .replace(/^_+|_+$/g, '');
  return s === '' ? null : s;
}

export function clamp01(value: number): number {
  if (!Number.isFinite(value)) return 0;
  return Math.min(1, Math.max(0, value));
}

/** Two decimals, clamped to 0–1: confidences are coarse scores, not measurements. */
export function confidenceOf(value: number): number {
  return Math.round(clamp01(value) * 100) / 100;
}

export function isValidLatLon(lat: number, lon: number): boolean {
  return Number.isFinite(lat) && Number.isFinite(lon) && lat >= -90 && lat <= 90 && lon >= -180 && lon <= 180;
}

/** A GeoJSON LineString from `[lon, lat]` positions, dropping consecutive duplicates; null if < 2 points. */
export function lineString(positions: readonly [number, number][]): LineString | null {
  const coords: [number, number][] = [];
  for (const p of positions) {
    const last = coords[coords.length - 1];
    if (last && last[0] === p[0] && last[1] === p[1]) continue;
    coords.push([p[0], p[1]]);
  }
  return coords.length >= 2 ? { type: 'LineString', coordinates: coords } : null;
}

/** A coordinate for a request URL: at most 6 decimals (~0.1 m), no float noise like 29.000000000000004. */
export function fmtCoord(n: number): string {
  return String(Math.round(n * 1e6) / 1e6);
}

/** Half-open on the max edges, so a point on a shared edge lands in exactly one cell. */
export function inBBox(point: LatLon, bbox: BBox): boolean {
  const [minLon, minLat, maxLon, maxLat] = bbox;
  return point.lon >= minLon && point.lon < maxLon && point.lat >= minLat && point.lat < maxLat;
}

/** The four quadrants of a bbox: SW, SE, NW, NE. */
export function quadrants(bbox: BBox): [BBox, BBox, BBox, BBox] {
  const [minLon, minLat, maxLon, maxLat] = bbox;
  const midLon = (minLon + maxLon) / 2;
  const midLat = (minLat + maxLat) / 2;
  return [
    [minLon, minLat, midLon, midLat],
    [midLon, minLat, maxLon, midLat],
    [minLon, midLat, midLon, maxLat],
    [midLon, midLat, maxLon, maxLat],
  ];
}

const EARTH_RADIUS_M = 6_371_008.8;

/**
 * Distance in metres from a point to a polyline (`[lon, lat]` positions), on a local
 * equirectangular projection: plenty for "is this report on that jam" at city scale.
 */
export function distanceToLineM(point: LatLon, line: readonly [number, number][]): number {
  const rad = Math.PI / 180;
  const kx = Math.cos(point.lat * rad) * rad * EARTH_RADIUS_M;
  const ky = rad * EARTH_RADIUS_M;
  const project = (lon: number, lat: number): [number, number] => [(lon - point.lon) * kx, (lat - point.lat) * ky];
  let best = Infinity;
  for (let i = 0; i < line.length; i++) {
    const a = line[i];
    if (!a) continue;
    const [ax, ay] = project(a[0], a[1]);
    const b = line[i + 1];
    if (!b) {
      best = Math.min(best, Math.hypot(ax, ay));
      continue;
    }
    const [bx, by] = project(b[0], b[1]);
    const dx = bx - ax;
    const dy = by - ay;
    const len2 = dx * dx + dy * dy;
    const t = len2 === 0 ? 0 : Math.max(0, Math.min(1, -(ax * dx + ay * dy) / len2));
    best = Math.min(best, Math.hypot(ax + t * dx, ay + t * dy));
  }
  return best;
}

/**
 * Dedupe by `sourceId`, keeping the first occurrence, except that a copy with geometry replaces one
 * without (a Waze closure seen in a quadrant that also holds its blocked jam line).
 */
export function dedupeItems(items: Iterable<NormalizedItem>): NormalizedItem[] {
  const byId = new Map<string, NormalizedItem>();
  for (const item of items) {
    const seen = byId.get(item.sourceId);
    if (!seen || (seen.geometry === null && item.geometry !== null)) byId.set(item.sourceId, item);
  }
  return [...byId.values()];
}

/** Parse an ISO-8601 timestamp to epoch ms; undefined when absent or unparseable. */
export function isoToMs(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const ms = Date.parse(value);
  return Number.isFinite(ms) ? ms : undefined;
}

/** A semaphore: at most `n` callers of `run` at once, FIFO. */
export interface Limiter {
  run<T>(task: () => Promise<T>): Promise<T>;
  /** Calls running now. */
  readonly active: number;
}

export function createLimiter(n: number): Limiter {
  const max = Math.max(1, Math.floor(n));
  let active = 0;
  const queue: (() => void)[] = [];
  const release = () => {
    active--;
    const next = queue.shift();
    if (next) {
      active++;
      next();
    }
  };
  return {
    get active() {
      return active;
    },
    async run<T>(task: () => Promise<T>): Promise<T> {
      if (active < max) active++;
      else await new Promise<void>((resolve) => queue.push(resolve));
      try {
        return await task();
      } finally {
        release();
      }
    },
  };
}

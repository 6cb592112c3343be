import type { Clock } from '../../clock.ts';
import { type CityRef, type EventType, type Severity } from '../../domain/event.ts';
import { ApiError, invalidParams, type InvalidParam } from '../../http/problems.ts';
import { resolveCity, suggestCities, type Province } from '../../provinces/index.ts';
import { decodeCursor, type ListQuery } from '../../read-model/query.ts';
import { WINDOW_MS } from '../../read-model/read-model.ts';

/** The list parameters after the strict `t` check: right shape, not yet right meaning. */
export interface RawListParams {
  city?: string;
  limit?: number;
  cursor?: string;
  type?: string;
  severity?: string;
  bbox?: string;
  near?: string;
  radius_km?: number;
  updated_since?: string;
  format?: 'json' | 'geojson';
}

export function cityRef(p: Province): CityRef {
  return { slug: p.slug, name: p.name, plate: p.plate };
}

/** Resolves a city name or plate code, or explains which provinces the caller may have meant. */
export function resolveCityOrThrow(input: string, where: 'path' | 'query'): Province {
  const p = resolveCity(input);
  if (p !== null) return p;
  const shown = input.length > 60 ? `${input.slice(0, 60)}…` : input;
  const suggestions = suggestCities(input).map((s) => ({ slug: s.slug, name: s.name, url: `/api/v1/events/${s.slug}` }));
  const hint = suggestions.length > 0 ? ` Did you mean ${suggestions.map((s) => s.name).join(', ')}?` : '';
  return throwCity(`'${shown}' is not one of Turkey's 81 provinces.${hint}`, suggestions, where);
}

function throwCity(detail: string, suggestions: { slug: string; name: string; url: string }[], where: 'path' | 'query'): never {
  throw new ApiError('unknown_city', detail, { suggestions }, {}, where === 'path' ? 404 : 400);
}

/**
 * Turns checked parameters into a ListQuery, or a 400 naming every parameter whose meaning is
 * wrong (a bbox with min > max, a date in the future…). Nothing is clamped or defaulted silently.
 */
export function parseListQuery(raw: RawListParams, opts: { accept: string | null; now: number; plate: number | null }): ListQuery {
  const bad: InvalidParam[] = [];
  const cursor = raw.cursor === undefined ? null : decodeCursor(raw.cursor);
  if (raw.cursor !== undefined && cursor === null) bad.push({ name: 'cursor', reason: 'must be a next_cursor value returned by this API' });

  let bbox: ListQuery['bbox'] = null;
  if (raw.bbox !== undefined) {
    const [minLon, minLat, maxLon, maxLat] = raw.bbox.split(',').map(Number) as [number, number, number, number];
    if (![minLon, maxLon].every((x) => x >= -180 && x <= 180) || ![minLat, maxLat].every((y) => y >= -90 && y <= 90)) {
      bad.push({ name: 'bbox', reason: 'longitudes must be within -180..180 and latitudes within -90..90' });
    } else if (minLon > maxLon || minLat > maxLat) {
      bad.push({ name: 'bbox', reason: 'must be minLon,minLat,maxLon,maxLat with min ≤ max' });
    } else bbox = [minLon, minLat, maxLon, maxLat];
  }

  let near: ListQuery['near'] = null;
  if (raw.near !== undefined) {
    const [lat, lon] = raw.near.split(',').map(Number) as [number, number];
    if (lat < -90 || lat > 90 || lon < -180 || lon > 180) bad.push({ name: 'near', reason: 'must be lat,lon with lat within -90..90 and lon within -180..180' });
    else near = { lat, lon, radiusKm: raw.radius_km ?? 10 };
  } else if (raw.radius_km !== undefined) {
    bad.push({ name: 'radius_km', reason: 'only meaningful together with near=lat,lon' });
  }

  let updatedSince: number | null = null;
  if (raw.updated_since !== undefined) {
    const ms = parseTimestamp(raw.updated_since);
    if (Number.isNaN(ms)) bad.push({ name: 'updated_since', reason: 'is not a valid date and time' });
    else if (ms > opts.now + 60_000) bad.push({ name: 'updated_since', reason: 'is in the future' });
    else if (ms < opts.now - WINDOW_MS) {
      throw new ApiError(
        'plan_required',
        'updated_since older than 24 hours reaches into history, which is part of the Enterprise plan.',
        { feature: 'history' },
      );
    } else updatedSince = ms;
  }

  if (bad.length > 0) throw invalidParams(bad);
  return {
    plate: opts.plate,
    limit: raw.limit ?? 100,
    cursor,
    types: raw.type === undefined ? null : new Set(raw.type.split(',') as EventType[]),
    severities: raw.severity === undefined ? null : new Set(raw.severity.split(',') as Severity[]),
    bbox,
    near,
    updatedSince,
    format: raw.format ?? (opts.accept !== null && opts.accept.includes('application/geo+json') ? 'geojson' : 'json'),
  };
}

/**
 * Epoch ms of an RFC 3339 timestamp whose shape the query schema already checked, or NaN when its
 * fields are out of range. Date.parse alone rolls impossible days over (2026-02-30 → March 2),
 * which would turn a typo into a silently different instant.
 */
function parseTimestamp(s: string): number {
  const ms = Date.parse(s);
  const m = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})/.exec(s);
  if (Number.isNaN(ms) || m === null) return NaN;
  const [y, mo, d, h, mi, sec] = m.slice(1).map(Number) as [number, number, number, number, number, number];
  const day = new Date(0);
  day.setUTCFullYear(y, mo - 1, d); // not Date.UTC, which reads years 0–99 as 1900–1999
  if (day.getUTCFullYear() !== y || day.getUTCMonth() !== mo - 1 || day.getUTCDate() !== d) return NaN;
  return h <= 23 && mi <= 59 && sec <= 59 ? ms : NaN;
}

import { type CityRef, type EventType, type Severity } from '../../domain/event.ts';
import { parseRfc3339 as parseTimestamp } from '../../clock.ts';
import { ApiError, invalidParams, type InvalidParam } from '../../http/problems.ts';
import { resolveCity, suggestCities, type Province } from '../../provinces/index.ts';
import type { HistoryStatus } from '../../history/history.ts';
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
  status?: 'active' | 'cleared' | 'all';
  from?: string;
  to?: string;
}

export interface ParseOptions {
  accept: string | null;
  now: number;
  plate: number | null;
  /** Whether the request runs on an Enterprise key: history is theirs. */
  enterprise: boolean;
  historyDays: number;
}

/** The list query, and the history range when the request reaches past the 24-hour view. */
export interface ParsedList {
  query: ListQuery;
  history: { status: HistoryStatus; from: number; to: number } | null;
}

const DAY_MS = 24 * 60 * 60 * 1000;

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
export function parseListQuery(raw: RawListParams, opts: ParseOptions): ParsedList {
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

  const wantsHistory = raw.status !== undefined || raw.from !== undefined || raw.to !== undefined;
  let updatedSince: number | null = null;
  let reachesBack = false;
  if (raw.updated_since !== undefined) {
    const ms = parseTimestamp(raw.updated_since);
    if (Number.isNaN(ms)) bad.push({ name: 'updated_since', reason: 'is not a valid date and time' });
    else if (ms > opts.now + 60_000) bad.push({ name: 'updated_since', reason: 'is in the future' });
    else {
      updatedSince = ms;
      reachesBack = ms < opts.now - WINDOW_MS;
    }
  }
  if ((wantsHistory || reachesBack) && !opts.enterprise) {
    const what = wantsHistory ? 'status, from and to (history)' : 'updated_since older than 24 hours (history)';
    throw new ApiError('plan_required', `${what} belong to the Enterprise plan; the Free plan serves the last 24 hours.`, { feature: 'history' });
  }

  let history: ParsedList['history'] = null;
  if (wantsHistory || reachesBack) {
    const oldest = opts.now - opts.historyDays * DAY_MS;
    const from = raw.from === undefined ? null : parseTimestamp(raw.from);
    const to = raw.to === undefined ? null : parseTimestamp(raw.to);
    if (Number.isNaN(from)) bad.push({ name: 'from', reason: 'is not a valid date and time' });
    if (Number.isNaN(to)) bad.push({ name: 'to', reason: 'is not a valid date and time' });
    // Without from, the range starts 24 h ago — or at updated_since when that reaches further;
    // without to, it ends now. Later pages keep the first page's range, which their cursor carries.
    const pinned = cursor?.range ?? null;
    const start = from ?? pinned?.from ?? Math.min(opts.now - WINDOW_MS, updatedSince ?? Number.POSITIVE_INFINITY);
    const end = to ?? pinned?.to ?? opts.now;
    if (!Number.isNaN(start) && !Number.isNaN(end)) {
      // Name the bound the client sent, or the cursor that carried it.
      if (start > end) {
        if (raw.from !== undefined) bad.push({ name: 'from', reason: 'must not be after to' });
        else if (raw.to !== undefined) bad.push({ name: 'to', reason: pinned !== null ? "must not be before the start of the cursor's range" : 'must not be before from, which is 24 hours ago when not given' });
        else bad.push({ name: 'cursor', reason: 'must be a next_cursor value returned by this API' });
      }
      if (start < oldest) {
        if (raw.from !== undefined) bad.push({ name: 'from', reason: `reaches past the ${opts.historyDays} days of history kept` });
        else if (pinned !== null) bad.push({ name: 'cursor', reason: `its range now reaches past the ${opts.historyDays} days of history kept; start again from the first page` });
        else bad.push({ name: 'updated_since', reason: `reaches past the ${opts.historyDays} days of history kept` });
      }
      if (to !== null && to > opts.now + 60_000) bad.push({ name: 'to', reason: 'is in the future' });
      else if (to === null && pinned !== null && pinned.to > opts.now + 60_000) bad.push({ name: 'cursor', reason: 'must be a next_cursor value returned by this API' });
    }
    // Incremental sync over history includes cleared events unless a status is asked for.
    history = { status: raw.status ?? (updatedSince !== null ? 'all' : 'active'), from: start, to: end };
  } else if (cursor?.range !== undefined) {
    // A history page's cursor without the history parameters would silently page the 24-hour view.
    bad.push({ name: 'cursor', reason: 'belongs to a history listing; send it with the status, from, to or updated_since of the page it came from' });
  }

  if (bad.length > 0) throw invalidParams(bad);
  const query: ListQuery = {
    plate: opts.plate,
    limit: raw.limit ?? 100,
    cursor,
    types: raw.type === undefined ? null : new Set(raw.type.split(',') as EventType[]),
    severities: raw.severity === undefined ? null : new Set(raw.severity.split(',') as Severity[]),
    bbox,
    near,
    updatedSince,
    format: raw.format ?? (prefersGeoJson(opts.accept) ? 'geojson' : 'json'),
  };
  return { query, history };
}

/** The q-value an Accept header gives a media type: its exact range, else its family's, else the any-type range. */
function mediaQuality(accept: string, type: string): number {
  const family = `${type.slice(0, type.indexOf('/'))}/*`;
  let best = -1;
  let rank = -1;
  for (const part of accept.split(',')) {
    const [range, ...params] = part.trim().split(';');
    const r = range?.trim().toLowerCase();
    const level = r === type ? 3 : r === family ? 2 : r === '*/*' ? 1 : 0;
    if (level === 0 || level < rank) continue;
    const qp = params.map((p) => p.trim()).find((p) => p.startsWith('q='));
    const q = qp === undefined ? 1 : Number(qp.slice(2));
    rank = level;
    best = Number.isFinite(q) ? Math.min(1, Math.max(0, q)) : 0;
  }
  return Math.max(0, best);
}

/** GeoJSON when the client asks for application/geo+json at least as much as for JSON. */
function prefersGeoJson(accept: string | null): boolean {
  if (accept === null || !accept.toLowerCase().includes('geo+json')) return false;
  const geo = mediaQuality(accept, 'application/geo+json');
  return geo > 0 && geo >= mediaQuality(accept, 'application/json');
}

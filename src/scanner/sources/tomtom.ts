/**
 * TomTom Traffic Incident Details v5 adapter (`key=`) and its pure parser.
 * Mapping: UPSTREAM-SOURCES §3.3; the choices left open there are documented in ./README.md.
 */
import type { EventType, JamDetails, LatLon, NormalizedItem, Severity } from '../../domain/event.ts';
import { HttpSourceCore, type HttpSourceDeps } from './core.ts';
import type { BBox, Cell, CellResult, Source, SourceStatus } from './source.ts';
import {
  confidenceOf,
  FieldTypeError,
  fmtCoord,
  isoToMs,
  isRecord,
  isValidLatLon,
  lineString,
  lookup,
  optArray,
  optNumber,
  optString,
  readTopItems,
  recordReader,
  reqRecord,
  reqString,
  text,
  type JsonRecord,
} from './util.ts';

export const TOMTOM_DEFAULT_URL = 'https://api.tomtom.com/traffic/services/5/incidentDetails';

/** The full projection; the API's default returns only type, geometry and iconCategory. */
export const TOMTOM_FIELDS =
  '{incidents{type,geometry{type,coordinates},properties{id,iconCategory,magnitudeOfDelay,events{description,code,iconCategory},startTime,endTime,from,to,length,delay,roadNumbers,timeValidity,probabilityOfOccurrence,numberOfReports,lastReportTime,tmc{countryCode,tableNumber,tableVersion,direction,points{location,offset}}}}}';

/** iconCategory → kind (8 is handled first, as a closure). */
const CATEGORY_KIND: Readonly<Record<number, EventType>> = {
  1: 'accident',
  2: 'hazard',
  3: 'hazard',
  4: 'hazard',
  5: 'hazard',
  6: 'jam',
  7: 'hazard',
  9: 'hazard',
  10: 'hazard',
  11: 'hazard',
  14: 'hazard',
};

/** Hazard categories in the Waze subtype vocabulary, so clients see one set of subtypes. */
const HAZARD_SUBTYPE: Readonly<Record<number, string>> = {
  2: 'hazard_weather_fog',
  3: 'hazard_on_road',
  4: 'hazard_weather_heavy_rain',
  5: 'hazard_on_road_ice',
  7: 'hazard_on_road_lane_closed',
  9: 'hazard_on_road_construction',
  10: 'hazard_weather_wind',
  11: 'hazard_weather_flood',
  14: 'hazard_on_road_car_stopped',
};

const PROBABILITY_CONFIDENCE: Readonly<Record<string, number>> = {
  certain: 0.95,
  probable: 0.75,
  risk_of: 0.5,
  improbable: 0.25,
};

/** magnitudeOfDelay → severity: 1 minor, 2 moderate, 3 major; 0 (unknown) and 4 (undefined) unknown. */
export function tomtomSeverity(magnitude: number): Severity {
  switch (magnitude) {
    case 1:
      return 'minor';
    case 2:
      return 'moderate';
    case 3:
      return 'major';
    default:
      return 'unknown';
  }
}

/** magnitudeOfDelay on Waze's jam level scale, so `jam.level` compares across sources. */
function magnitudeLevel(magnitude: number): number | null {
  return magnitude >= 1 && magnitude <= 3 ? magnitude + 1 : null;
}

/** probabilityOfOccurrence sets the base; community reports add up to 0.05. */
export function tomtomConfidence(probability: string | null, reports: number | null): number {
  const base = lookup(PROBABILITY_CONFIDENCE, probability?.toLowerCase()) ?? 0.8;
  const boost = reports !== null && reports > 0 ? Math.min(0.05, reports * 0.0125) : 0;
  return confidenceOf(base + boost);
}

interface TomTomEvent {
  description: string | null;
  code: number | null;
  iconCategory: number | null;
}

function readEvents(props: JsonRecord): TomTomEvent[] {
  const out: TomTomEvent[] = [];
  for (const e of optArray(props, 'events') ?? []) {
    if (!isRecord(e)) throw new FieldTypeError('events[]', 'an object');
    out.push({
      description: text(optString(e, 'description')),
      code: optNumber(e, 'code') ?? null,
      iconCategory: optNumber(e, 'iconCategory') ?? null,
    });
  }
  return out;
}

function readPosition(v: unknown): [number, number] {
  if (!Array.isArray(v) || typeof v[0] !== 'number' || typeof v[1] !== 'number' || !isValidLatLon(v[1], v[0])) {
    throw new FieldTypeError('geometry.coordinates', 'a [lon, lat] position');
  }
  return [v[0], v[1]];
}

function readGeometry(feature: JsonRecord): { location: LatLon; line: [number, number][] | null } {
  const geometry = reqRecord(feature, 'geometry');
  const type = reqString(geometry, 'type');
  const coords = geometry.coordinates;
  if (type === 'Point') {
    const [lon, lat] = readPosition(coords);
    return { location: { lat, lon }, line: null };
  }
  if (type === 'LineString' && Array.isArray(coords) && coords.length > 0) {
    const line = coords.map(readPosition);
    const [lon, lat] = line[0] ?? [0, 0];
    return { location: { lat, lon }, line };
  }
  throw new FieldTypeError('geometry', 'a Point or a LineString');
}

function classify(primary: number, magnitude: number, events: TomTomEvent[]): { kind: EventType; category: number } | null {
  const categories = [primary, ...events.map((e) => e.iconCategory).filter((c): c is number => c !== null)];
  const closureCode = events.some((e) => e.code !== null && e.code >= 400 && e.code < 500);
  if (categories.includes(8) || (magnitude === 4 && closureCode)) return { kind: 'road_closure', category: 8 };
  const direct = lookup(CATEGORY_KIND, primary);
  if (direct !== undefined) return { kind: direct, category: primary };
  // Unknown primary (0 or unlisted): the most telling event decides — accident, then hazard, then jam.
  for (const wanted of ['accident', 'hazard', 'jam'] as const) {
    const c = categories.find((cat) => lookup(CATEGORY_KIND, cat) === wanted);
    if (c !== undefined) return { kind: wanted, category: c };
  }
  return null;
}

function roadName(numbers: string[], from: string | null, to: string | null): string | null {
  const stretch = from !== null && to !== null ? `${from} → ${to}` : (from ?? to);
  const num = numbers.length > 0 ? numbers.join(' / ') : null;
  if (num !== null && stretch !== null) return `${num} (${stretch})`;
  return num ?? stretch;
}

const readFeature = recordReader((raw): NormalizedItem | null => {
  const props = reqRecord(raw, 'properties');
  const id = reqString(props, 'id');
  if (optString(props, 'timeValidity') === 'future') return null;
  const primary = optNumber(props, 'iconCategory') ?? 0;
  const magnitude = optNumber(props, 'magnitudeOfDelay') ?? 0;
  const events = readEvents(props);
  const mapped = classify(primary, magnitude, events);
  if (mapped === null) return null;
  const { location, line } = readGeometry(raw);
  const reportedAt = isoToMs(optString(props, 'startTime')) ?? isoToMs(optString(props, 'lastReportTime'));
  if (reportedAt === undefined) return null;

  const numbers: string[] = [];
  for (const n of optArray(props, 'roadNumbers') ?? []) {
    if (typeof n !== 'string') throw new FieldTypeError('roadNumbers[]', 'a string');
    const t = text(n);
    if (t !== null) numbers.push(t);
  }
  const descriptions = [...new Set(events.map((e) => e.description).filter((d): d is string => d !== null))];
  const length = optNumber(props, 'length') ?? null;
  const delay = optNumber(props, 'delay') ?? null;
  const categories = new Set([primary, ...events.map((e) => e.iconCategory)]);

  let subtype: string | null = null;
  if (mapped.kind === 'hazard') subtype = lookup(HAZARD_SUBTYPE, mapped.category) ?? null;
  if (mapped.kind === 'road_closure' && categories.has(9)) subtype = 'road_closed_construction';

  const jam: JamDetails | null =
    mapped.kind === 'jam'
      ? { speed_kmh: null, length_m: length, delay_s: delay, level: magnitudeLevel(magnitude) }
      : null;

  return {
    source: 'tomtom',
    sourceId: id,
    type: mapped.kind,
    subtype,
    severity: mapped.kind === 'road_closure' ? 'major' : tomtomSeverity(magnitude),
    location,
    geometry: line ? lineString(line) : null,
    road: roadName(numbers, text(optString(props, 'from')), text(optString(props, 'to'))),
    district: null,
    description: descriptions.length > 0 ? descriptions.join('; ') : null,
    jam,
    reportedAt,
    confidence: tomtomConfidence(
      text(optString(props, 'probabilityOfOccurrence')),
      optNumber(props, 'numberOfReports') ?? null,
    ),
  };
});

/** Map one incidentDetails payload to normalized items. Pure; a malformed incident is skipped. */
export function parseTomTom(payload: unknown): NormalizedItem[] {
  return readTopItems(payload, 'incidents', readFeature);
}

// ---------------------------------------------------------------------------------------------
// Source
// ---------------------------------------------------------------------------------------------

export interface TomTomSourceOptions extends HttpSourceDeps {
  apiKey: string;
  baseUrl?: string;
  /** Requests in flight at once (default 4). */
  concurrency?: number;
  /** Back-off after a 403: 60 s doubling to 15 min by default. */
  backoffBaseMs?: number;
  backoffMaxMs?: number;
}

export class TomTomSource implements Source {
  readonly name = 'tomtom' as const;
  readonly concurrency: number;
  private readonly core: HttpSourceCore;
  private readonly baseUrl: string;
  private readonly apiKey: string;

  constructor(options: TomTomSourceOptions) {
    this.concurrency = options.concurrency ?? 4;
    this.baseUrl = options.baseUrl ?? TOMTOM_DEFAULT_URL;
    this.apiKey = options.apiKey;
    this.core = new HttpSourceCore(
      'tomtom',
      options,
      {
        statuses: [403, 429],
        htmlIsBlock: false,
        baseMs: options.backoffBaseMs ?? 60_000,
        maxMs: options.backoffMaxMs ?? 15 * 60_000,
        honourRetryAfter: false,
        describe: (f) =>
          `TomTom answered ${f.status ?? '?'} (invalid key, or QPS/quota exhausted)${f.bodySnippet ? `: ${f.bodySnippet.slice(0, 120)}` : ''}`,
      },
      this.concurrency,
      {},
      [options.apiKey],
    );
  }

  /** The incidentDetails URL for a bbox (`bbox=minLon,minLat,maxLon,maxLat`). Holds the key. */
  url(bbox: BBox): URL {
    const u = new URL(this.baseUrl);
    u.searchParams.set('key', this.apiKey);
    u.searchParams.set('bbox', bbox.map(fmtCoord).join(','));
    u.searchParams.set('fields', TOMTOM_FIELDS);
    u.searchParams.set('language', 'en-GB');
    u.searchParams.set('timeValidityFilter', 'present');
    return u;
  }

  async fetchCell(cell: Cell, signal?: AbortSignal): Promise<CellResult> {
    return this.core.getItems(this.url(cell.bbox), parseTomTom, signal);
  }

  status(): SourceStatus {
    return this.core.status();
  }
}

export function createTomTomSource(options: TomTomSourceOptions): TomTomSource {
  return new TomTomSource(options);
}

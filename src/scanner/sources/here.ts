/**
 * HERE Traffic API v7 `/incidents` adapter (`apiKey=`) and its pure parser.
 * Mapping: UPSTREAM-SOURCES §4.3; the choices left open there are documented in ./README.md.
 */
import type { EventType, JamDetails, NormalizedItem, Severity } from '../../domain/event.ts';
import { HttpSourceCore, type HttpSourceDeps } from './core.ts';
import type { BBox, Cell, CellResult, Source, SourceStatus } from './source.ts';
import {
  FieldTypeError,
  fmtCoord,
  isoToMs,
  isRecord,
  isValidLatLon,
  lineString,
  lookup,
  optArray,
  optBoolean,
  optNumber,
  optRecord,
  optString,
  readTopItems,
  recordReader,
  reqRecord,
  text,
  type JsonRecord,
} from './util.ts';

export const HERE_DEFAULT_URL = 'https://data.traffic.hereapi.com/v7/incidents';

/** HERE incidents are curated (agencies, probes, editors); they carry no per-item certainty. */
export const HERE_CONFIDENCE = 0.9;

const TYPE_KIND: Readonly<Record<string, EventType>> = {
  accident: 'accident',
  congestion: 'jam',
  roadClosure: 'road_closure',
  construction: 'hazard',
  disabledVehicle: 'hazard',
  roadHazard: 'hazard',
  weather: 'hazard',
  laneRestriction: 'hazard',
};

/** HERE types in the Waze subtype vocabulary where one exists. */
const HAZARD_SUBTYPE: Readonly<Record<string, string>> = {
  construction: 'hazard_on_road_construction',
  disabledVehicle: 'hazard_on_road_car_stopped',
  roadHazard: 'hazard_on_road',
  weather: 'hazard_weather',
  laneRestriction: 'hazard_on_road_lane_closed',
  plannedEvent: 'planned_event',
  massTransit: 'mass_transit',
};

const CLOSURE_SUBTYPE: Readonly<Record<string, string>> = {
  construction: 'road_closed_construction',
  plannedEvent: 'road_closed_event',
  roadHazard: 'road_closed_hazard',
  weather: 'road_closed_hazard',
  accident: 'road_closed_accident',
};

/** criticality → severity: critical major, major moderate, minor and lowImpact minor. */
export function hereSeverity(criticality: string | null): Severity {
  switch (criticality) {
    case 'critical':
      return 'major';
    case 'major':
      return 'moderate';
    case 'minor':
    case 'lowImpact':
      return 'minor';
    default:
      return 'unknown';
  }
}

const SEVERITY_LEVEL: Readonly<Record<Severity, number | null>> = { minor: 2, moderate: 3, major: 4, unknown: null };

function localized(obj: JsonRecord, key: string): string | null {
  const v = optRecord(obj, key);
  return v ? text(optString(v, 'value')) : null;
}

/** The shape links concatenated into one polyline (`[lon, lat]`); shared endpoints collapse. */
function readShape(location: JsonRecord): [number, number][] {
  const shape = optRecord(location, 'shape');
  const points: [number, number][] = [];
  for (const link of (shape && optArray(shape, 'links')) ?? []) {
    if (!isRecord(link)) throw new FieldTypeError('shape.links[]', 'an object');
    for (const p of optArray(link, 'points') ?? []) {
      if (!isRecord(p)) throw new FieldTypeError('shape.links[].points[]', 'an object');
      const lat = optNumber(p, 'lat');
      const lng = optNumber(p, 'lng');
      if (lat === undefined || lng === undefined || !isValidLatLon(lat, lng)) {
        throw new FieldTypeError('shape.links[].points[]', 'a {lat, lng} position');
      }
      points.push([lng, lat]);
    }
  }
  return points;
}

const readResult = recordReader((raw): NormalizedItem | null => {
  const details = reqRecord(raw, 'incidentDetails');
  const location = reqRecord(raw, 'location');
  const key = text(optString(details, 'originalId')) ?? text(optString(details, 'id'));
  if (key === null) return null;
  const type = text(optString(details, 'type')) ?? 'other';
  const criticality = text(optString(details, 'criticality'));
  const roadClosed = optBoolean(details, 'roadClosed') ?? false;

  let kind: EventType | undefined;
  if (roadClosed || type === 'roadClosure') kind = 'road_closure';
  else kind = lookup(TYPE_KIND, type);
  // plannedEvent, massTransit, other, and any type HERE adds later (treated as `other`).
  if (kind === undefined && (criticality === 'critical' || criticality === 'major')) kind = 'hazard';
  if (kind === undefined) return null;

  const line = readShape(location);
  const first = line[0];
  if (!first) return null;
  const reportedAt = isoToMs(optString(details, 'startTime')) ?? isoToMs(optString(details, 'entryTime'));
  if (reportedAt === undefined) return null;

  const severity: Severity = kind === 'road_closure' ? 'major' : hereSeverity(criticality);
  let subtype: string | null = null;
  if (kind === 'hazard') subtype = lookup(HAZARD_SUBTYPE, type) ?? null;
  if (kind === 'road_closure') subtype = lookup(CLOSURE_SUBTYPE, type) ?? null;
  const jam: JamDetails | null =
    kind === 'jam'
      ? { speed_kmh: null, length_m: optNumber(location, 'length') ?? null, delay_s: null, level: SEVERITY_LEVEL[severity] }
      : null;

  return {
    source: 'here',
    sourceId: key,
    type: kind,
    subtype,
    severity,
    location: { lon: first[0], lat: first[1] },
    geometry: lineString(line),
    road: text(optString(location, 'description')),
    district: null,
    description: localized(details, 'description') ?? localized(details, 'summary'),
    jam,
    reportedAt,
    confidence: HERE_CONFIDENCE,
  };
});

/** Map one `/v7/incidents` payload to normalized items, keyed on `originalId`. Pure; never throws. */
export function parseHere(payload: unknown): NormalizedItem[] {
  return readTopItems(payload, 'results', readResult);
}

// ---------------------------------------------------------------------------------------------
// Source
// ---------------------------------------------------------------------------------------------

export interface HereSourceOptions extends HttpSourceDeps {
  apiKey: string;
  baseUrl?: string;
  /** Requests in flight at once (default 4). */
  concurrency?: number;
  /** Back-off after 429/503 (or a rejected key) without `Retry-After`: 60 s doubling to 10 min. */
  backoffBaseMs?: number;
  /** Also the cap on a `Retry-After` (default 10 min). */
  backoffMaxMs?: number;
}

export class HereSource implements Source {
  readonly name = 'here' as const;
  readonly concurrency: number;
  private readonly core: HttpSourceCore;
  private readonly baseUrl: string;
  private readonly apiKey: string;

  constructor(options: HereSourceOptions) {
    this.concurrency = options.concurrency ?? 4;
    this.baseUrl = options.baseUrl ?? HERE_DEFAULT_URL;
    this.apiKey = options.apiKey;
    this.core = new HttpSourceCore(
      'here',
      options,
      {
        statuses: [401, 403, 429, 503],
        htmlIsBlock: false,
        baseMs: options.backoffBaseMs ?? 60_000,
        maxMs: options.backoffMaxMs ?? 10 * 60_000,
        honourRetryAfter: true,
        describe: (f) =>
          f.status === 401 || f.status === 403
            ? `HERE answered ${f.status} (API key rejected)`
            : `HERE answered ${f.status ?? '?'} (throttled${f.retryAfterMs !== null ? `, Retry-After ${Math.round(f.retryAfterMs / 1000)} s` : ''})`,
      },
      this.concurrency,
      {},
      [options.apiKey],
    );
  }

  /** The incidents URL for a bbox (`in=bbox:west,south,east,north`). Holds the key. */
  url(bbox: BBox): URL {
    const [west, south, east, north] = bbox.map(fmtCoord);
    const u = new URL(this.baseUrl);
    const q = `in=bbox:${west},${south},${east},${north}&locationReferencing=shape&apiKey=${encodeURIComponent(this.apiKey)}`;
    u.search = u.search ? `${u.search}&${q}` : `?${q}`;
    return u;
  }

  async fetchCell(cell: Cell, signal?: AbortSignal): Promise<CellResult> {
    return this.core.getItems(this.url(cell.bbox), parseHere, signal);
  }

  status(): SourceStatus {
    return this.core.status();
  }
}

export function createHereSource(options: HereSourceOptions): HereSource {
  return new HereSource(options);
}

/**
 * Waze live-map `georss` adapter (keyless, unofficial, best-effort) and its pure parser.
 * Mapping: UPSTREAM-SOURCES §1.4; the choices left open there are documented in ./README.md.
 */
import type { EventType, JamDetails, LatLon, LineString, NormalizedItem, Severity } from '../../domain/event.ts';
import { HttpSourceCore, type CoreResult, type HttpSourceDeps } from './core.ts';
import type { BBox, Cell, CellFailureKind, CellResult, Source, SourceStatus } from './source.ts';
import {
  confidenceOf,
  dedupeItems,
  distanceToLineM,
  FieldTypeError,
  fmtCoord,
  isRecord,
  isValidLatLon,
  lineString,
  lookup,
  lowerSnake,
  optArray,
  optNumber,
  optRecord,
  optString,
  quadrants,
  recordReader,
  reqRecord,
  reqString,
  text,
  topArray,
  type JsonRecord,
} from './util.ts';

export const WAZE_DEFAULT_URL = 'https://www.waze.com/live-map/api/georss';

/** Waze truncates a response at about 200 alerts; at this many, a bbox is split into quadrants. */
export const WAZE_ALERT_CAP = 200;
/** Splitting stops at this depth (4³ = 64 requests for a cell at most). */
export const WAZE_MAX_SPLIT_DEPTH = 3;
/** Alerts below this reliability are noise, unless `reportBy` is set (JAM alerts: no exception). */
export const WAZE_MIN_RELIABILITY = 5;
/** A JAM alert this close to a jams[] line is the same jam and is merged into it. */
export const WAZE_JAM_MERGE_RADIUS_M = 100;
/** jams[] are computed from many drivers' speeds, not reported: a fixed, high confidence. */
export const WAZE_JAM_CONFIDENCE = 0.9;
/** An accident `_MAJOR` report needs this reliability (or `reportBy`) to be served as major. */
export const WAZE_MAJOR_MIN_RELIABILITY = 7;

// ---------------------------------------------------------------------------------------------
// Parser
// ---------------------------------------------------------------------------------------------

interface WazeAlert {
  uuid: string;
  type: string;
  subtype: string | null;
  location: LatLon;
  reliability: number | null;
  confidence: number | null;
  reportBy: string | null;
  pubMillis: number;
  street: string | null;
  city: string | null;
  description: string | null;
}

interface WazeJam {
  key: string;
  line: [number, number][];
  level: number;
  speedKmh: number | null;
  lengthM: number | null;
  delayS: number | null;
  street: string | null;
  city: string | null;
  pubMillis: number;
  blockingAlertUuid: string | null;
  blockType: string | null;
  blockStartTime: number | null;
  causeAlert: WazeAlert | null;
}

const ALERT_KINDS: Readonly<Record<string, EventType>> = {
  ACCIDENT: 'accident',
  ROAD_CLOSED: 'road_closure',
  HAZARD: 'hazard',
  WEATHERHAZARD: 'hazard',
  CONSTRUCTION: 'hazard',
  JAM: 'jam',
};

/** `JAM_*_TRAFFIC` subtypes on Waze's 0–5 jam level scale. */
const JAM_SUBTYPE_LEVEL: Readonly<Record<string, number>> = {
  JAM_LIGHT_TRAFFIC: 1,
  JAM_MODERATE_TRAFFIC: 2,
  JAM_HEAVY_TRAFFIC: 3,
  JAM_STAND_STILL_TRAFFIC: 4,
};

function readLocation(obj: JsonRecord, key: string): LatLon {
  const loc = reqRecord(obj, key);
  const lon = optNumber(loc, 'x');
  const lat = optNumber(loc, 'y');
  if (lon === undefined || lat === undefined || !isValidLatLon(lat, lon)) {
    throw new FieldTypeError(`${key}.x/y`, 'a WGS84 position');
  }
  return { lat, lon };
}

const readAlert = recordReader((raw): WazeAlert | null => {
  const pubMillis = optNumber(raw, 'pubMillis');
  if (pubMillis === undefined) return null;
  return {
    uuid: reqString(raw, 'uuid'),
    type: reqString(raw, 'type').trim().toUpperCase(),
    subtype: text(optString(raw, 'subtype')),
    location: readLocation(raw, 'location'),
    reliability: optNumber(raw, 'reliability') ?? null,
    confidence: optNumber(raw, 'confidence') ?? null,
    reportBy: text(optString(raw, 'reportBy')),
    pubMillis,
    street: text(optString(raw, 'street')),
    city: text(optString(raw, 'city')),
    description: text(optString(raw, 'reportDescription')),
  };
});

const readJam = recordReader((raw): WazeJam | null => {
  const idValue = raw.uuid ?? raw.id;
  let key: string;
  if (typeof idValue === 'number' && Number.isFinite(idValue)) key = String(idValue);
  else if (typeof idValue === 'string' && idValue.trim() !== '') key = idValue.trim();
  else return null;
  const line: [number, number][] = [];
  for (const p of optArray(raw, 'line') ?? []) {
    if (!isRecord(p)) return null;
    const lon = optNumber(p, 'x');
    const lat = optNumber(p, 'y');
    if (lon === undefined || lat === undefined || !isValidLatLon(lat, lon)) return null;
    line.push([lon, lat]);
  }
  if (line.length === 0) return null;
  const pubMillis = optNumber(raw, 'pubMillis');
  if (pubMillis === undefined) return null;
  const speedKmh = optNumber(raw, 'speedKMH');
  const speedMs = optNumber(raw, 'speed');
  const delay = optNumber(raw, 'delay');
  const cause = raw.causeAlert === undefined || raw.causeAlert === null ? null : readAlert(raw.causeAlert);
  return {
    key,
    line,
    level: optNumber(raw, 'level') ?? 0,
    speedKmh: speedKmh ?? (speedMs === undefined ? null : Math.round(speedMs * 3.6 * 100) / 100),
    lengthM: optNumber(raw, 'length') ?? null,
    // -1 means "blocked": there is no finite delay.
    delayS: delay === undefined || delay < 0 ? null : delay,
    street: text(optString(raw, 'street')),
    city: text(optString(raw, 'city')),
    pubMillis,
    blockingAlertUuid: text(optString(raw, 'blockingAlertUuid')),
    blockType: text(optString(raw, 'blockType')),
    blockStartTime: optNumber(raw, 'blockStartTime') ?? null,
    causeAlert: cause,
  };
});

/** Waze `city` is free text, often "District, Province"; the first part is the district. */
export function wazeDistrict(city: string | null): string | null {
  if (city === null) return null;
  return text(city.split(',')[0]);
}

/** Jam level (Waze 0–5) → severity: 2 minor, 3 moderate, 4–5 major (≤ 1 is not a jam). */
export function wazeLevelSeverity(level: number | null): Severity {
  if (level === null) return 'unknown';
  if (level >= 4) return 'major';
  if (level >= 3) return 'moderate';
  if (level >= 1) return 'minor';
  return 'unknown';
}

function alertSeverity(kind: EventType, a: WazeAlert): Severity {
  switch (kind) {
    case 'road_closure':
      return 'major';
    case 'accident': {
      const sub = a.subtype?.toUpperCase() ?? '';
      if (sub.endsWith('_MAJOR')) {
        const trusted = a.reportBy !== null || (a.reliability ?? 0) >= WAZE_MAJOR_MIN_RELIABILITY;
        return trusted ? 'major' : 'moderate';
      }
      if (sub.endsWith('_MINOR')) return 'minor';
      return 'unknown';
    }
    case 'jam':
      return wazeLevelSeverity(lookup(JAM_SUBTYPE_LEVEL, a.subtype?.toUpperCase()) ?? null);
    case 'hazard':
      return 'unknown';
  }
}

/** reliability and confidence are 0–10; reliability weighs most. */
export function wazeConfidence(reliability: number | null, confidence: number | null): number {
  if (reliability === null && confidence === null) return 0.5;
  if (reliability === null) return confidenceOf((confidence ?? 0) / 10);
  if (confidence === null) return confidenceOf(reliability / 10);
  return confidenceOf(0.8 * (reliability / 10) + 0.2 * (confidence / 10));
}

function passesNoiseFloor(a: WazeAlert): boolean {
  return a.reportBy !== null || (a.reliability ?? 0) >= WAZE_MIN_RELIABILITY;
}

function alertItem(a: WazeAlert, kind: EventType, geometry: LineString | null): NormalizedItem {
  const level = kind === 'jam' ? (lookup(JAM_SUBTYPE_LEVEL, a.subtype?.toUpperCase()) ?? null) : null;
  const jam: JamDetails | null = kind === 'jam' ? { speed_kmh: null, length_m: null, delay_s: null, level } : null;
  return {
    source: 'waze',
    sourceId: a.uuid,
    type: kind,
    subtype: lowerSnake(a.subtype),
    severity: alertSeverity(kind, a),
    location: a.location,
    geometry,
    road: a.street,
    district: wazeDistrict(a.city),
    description: a.description,
    jam,
    reportedAt: a.pubMillis,
    confidence: wazeConfidence(a.reliability, a.confidence),
  };
}

function firstPoint(line: [number, number][]): LatLon {
  const p = line[0] ?? [0, 0];
  return { lon: p[0], lat: p[1] };
}

function jamItem(j: WazeJam): NormalizedItem {
  return {
    source: 'waze',
    sourceId: j.blockingAlertUuid !== null ? `jam:${j.blockingAlertUuid}` : j.key,
    type: 'jam',
    subtype: null,
    severity: wazeLevelSeverity(j.level),
    location: firstPoint(j.line),
    geometry: lineString(j.line),
    road: j.street,
    district: wazeDistrict(j.city),
    description: null,
    jam: { speed_kmh: j.speedKmh, length_m: j.lengthM, delay_s: j.delayS, level: j.level },
    reportedAt: j.pubMillis,
    confidence: WAZE_JAM_CONFIDENCE,
  };
}

/** A closure known only from its blocked jam (its alert is outside this response or unusable). */
function closureFromJam(j: WazeJam, uuid: string): NormalizedItem {
  return {
    source: 'waze',
    sourceId: uuid,
    type: 'road_closure',
    subtype: lowerSnake(j.blockType),
    severity: 'major',
    location: firstPoint(j.line),
    geometry: lineString(j.line),
    road: j.street,
    district: wazeDistrict(j.city),
    description: null,
    jam: null,
    reportedAt: j.blockStartTime ?? j.pubMillis,
    confidence: WAZE_JAM_CONFIDENCE,
  };
}

function lineLength(j: WazeJam): number {
  return j.lengthM ?? j.line.length;
}

export interface WazeParseResult {
  items: NormalizedItem[];
  /** How many alerts the response held (all types, before any filtering): the truncation signal. */
  alertCount: number;
}

/**
 * Map one georss (or partner-feed) payload to normalized items. Pure; never throws: a record with a
 * field of the wrong type is skipped. `users[]`, comments and `wazeData` are never read.
 */
export function parseWazeResponse(payload: unknown): WazeParseResult {
  const rawAlerts = topArray(payload, 'alerts');
  const alerts = rawAlerts.map(readAlert).filter((a): a is WazeAlert => a !== null);
  const jams = topArray(payload, 'jams')
    .map(readJam)
    .filter((j): j is WazeJam => j !== null);
  const alertsByUuid = new Map(alerts.map((a) => [a.uuid, a] as const));

  // Level-5 jams caused by an alert are merged into that alert's event (one event, the jam's line).
  const blocked = new Map<string, WazeJam>();
  const items: NormalizedItem[] = [];
  const jamLines: [number, number][][] = [];
  for (const j of jams) {
    if (j.level >= 5 && j.blockingAlertUuid !== null) {
      const seen = blocked.get(j.blockingAlertUuid);
      if (!seen || lineLength(j) > lineLength(seen)) blocked.set(j.blockingAlertUuid, j);
      jamLines.push(j.line);
    } else if (j.level >= 2) {
      items.push(jamItem(j));
      jamLines.push(j.line);
    }
  }

  for (const [uuid, j] of blocked) {
    const alert = alertsByUuid.get(uuid) ?? (j.causeAlert?.uuid === uuid ? j.causeAlert : null);
    const kind = alert ? lookup(ALERT_KINDS, alert.type) : undefined;
    if (alert && kind !== undefined && kind !== 'jam') {
      // The blocked jam confirms its alert, so the noise floor does not apply to it.
      items.push(alertItem(alert, kind, lineString(j.line)));
    } else {
      items.push(closureFromJam(j, uuid));
    }
  }

  for (const a of alerts) {
    if (blocked.has(a.uuid)) continue;
    const kind = lookup(ALERT_KINDS, a.type);
    if (kind === undefined) continue; // POLICE, CHIT_CHAT, MISC and anything unknown
    if (kind === 'jam') {
      if ((a.reliability ?? 0) < WAZE_MIN_RELIABILITY) continue;
      if (jamLines.some((line) => distanceToLineM(a.location, line) <= WAZE_JAM_MERGE_RADIUS_M)) continue;
    } else if (!passesNoiseFloor(a)) {
      continue;
    }
    items.push(alertItem(a, kind, null));
  }

  return { items: dedupeItems(items), alertCount: rawAlerts.length };
}

/** {@link parseWazeResponse} without the alert count. */
export function parseWaze(payload: unknown): NormalizedItem[] {
  return parseWazeResponse(payload).items;
}

// ---------------------------------------------------------------------------------------------
// Source
// ---------------------------------------------------------------------------------------------

export interface WazeSourceOptions extends HttpSourceDeps {
  baseUrl?: string;
  /** Requests in flight at once (default 2). */
  concurrency?: number;
  alertCap?: number;
  maxDepth?: number;
  /** Back-off after a 403 or an HTML answer: 60 s doubling to 15 min by default. */
  backoffBaseMs?: number;
  backoffMaxMs?: number;
}

/** A remembered subdivision: a leaf is requested as is, a node through its four quadrants. */
export interface WazeSplitNode {
  bbox: BBox;
  children: WazeSplitNode[] | null;
}

type NodeResult =
  | { ok: true; items: NormalizedItem[]; alertCount: number; requests: number }
  | { ok: false; kind: CellFailureKind; error: string; requests: number };

const FAILURE_RANK: Readonly<Record<CellFailureKind, number>> = {
  blocked: 4,
  timeout: 3,
  network: 3,
  http: 3,
  parse: 3,
  backoff: 1,
};

function sameBBox(a: BBox, b: BBox): boolean {
  return a.every((v, i) => v === b[i]);
}

export class WazeSource implements Source {
  readonly name = 'waze' as const;
  readonly concurrency: number;
  private readonly core: HttpSourceCore;
  private readonly baseUrl: string;
  private readonly cap: number;
  private readonly maxDepth: number;
  private readonly splits = new Map<string, WazeSplitNode>();

  constructor(options: WazeSourceOptions) {
    this.concurrency = options.concurrency ?? 2;
    this.baseUrl = options.baseUrl ?? WAZE_DEFAULT_URL;
    this.cap = options.alertCap ?? WAZE_ALERT_CAP;
    this.maxDepth = options.maxDepth ?? WAZE_MAX_SPLIT_DEPTH;
    this.core = new HttpSourceCore(
      'waze',
      options,
      {
        statuses: [403, 429],
        htmlIsBlock: true,
        baseMs: options.backoffBaseMs ?? 60_000,
        maxMs: options.backoffMaxMs ?? 15 * 60_000,
        honourRetryAfter: false,
        describe: (f) =>
          f.status === 403
            ? 'Waze answered 403 (bot wall or blocked address)'
            : f.status === 429
              ? 'Waze answered 429 (throttled)'
              : 'Waze answered an HTML page instead of JSON (bot wall)',
      },
      this.concurrency,
      { referer: 'https://www.waze.com/live-map', 'user-agent': 'trafik/1.0 (traffic events API)' },
    );
  }

  /** The georss URL for a bbox (`top`=north, `bottom`=south, `left`=west, `right`=east). */
  url(bbox: BBox): URL {
    const [minLon, minLat, maxLon, maxLat] = bbox;
    const u = new URL(this.baseUrl);
    const q = `top=${fmtCoord(maxLat)}&bottom=${fmtCoord(minLat)}&left=${fmtCoord(minLon)}&right=${fmtCoord(maxLon)}&env=row&types=alerts,traffic`;
    u.search = u.search ? `${u.search}&${q}` : `?${q}`;
    return u;
  }

  /** The boxes a cell is currently requested as (its own bbox unless it was split). */
  splitOf(cellId: string): BBox[] | null {
    const root = this.splits.get(cellId);
    if (!root) return null;
    const leaves: BBox[] = [];
    const walk = (n: WazeSplitNode) => {
      if (n.children) n.children.forEach(walk);
      else leaves.push(n.bbox);
    };
    walk(root);
    return leaves;
  }

  async fetchCell(cell: Cell, signal?: AbortSignal): Promise<CellResult> {
    if (this.core.backoff.isOpen()) return this.core.backoffFailure();
    const remembered = this.splits.get(cell.id);
    const root: WazeSplitNode =
      remembered && sameBBox(remembered.bbox, cell.bbox) ? remembered : { bbox: cell.bbox, children: null };
    const r = await this.fetchNode(root, 0, false, signal);
    if (root.children) this.splits.set(cell.id, root);
    else this.splits.delete(cell.id);
    if (!r.ok) return r;
    return { ok: true, items: dedupeItems(r.items), requests: r.requests };
  }

  private async fetchNode(
    node: WazeSplitNode,
    depth: number,
    justSplit: boolean,
    signal: AbortSignal | undefined,
  ): Promise<NodeResult> {
    if (node.children) {
      const children = node.children;
      const results = await Promise.all(children.map((c) => this.fetchNode(c, depth + 1, false, signal)));
      const requests = results.reduce((n, r) => n + r.requests, 0);
      let failure: NodeResult | null = null;
      for (const r of results) {
        if (!r.ok && (failure === null || (!failure.ok && FAILURE_RANK[r.kind] > FAILURE_RANK[failure.kind]))) {
          failure = r;
        }
      }
      if (failure && !failure.ok) return { ...failure, requests };
      const items: NormalizedItem[] = [];
      let alertCount = 0;
      for (const r of results) {
        if (r.ok) {
          items.push(...r.items);
          alertCount += r.alertCount;
        }
      }
      // Traffic fell to half the cap across leaf quadrants: ask for the parent box again next time.
      if (!justSplit && children.every((c) => c.children === null) && alertCount < this.cap / 2) {
        node.children = null;
      }
      return { ok: true, items: dedupeItems(items), alertCount, requests };
    }

    const r: CoreResult = await this.core.get(this.url(node.bbox), signal);
    if (!r.ok) return r;
    const parsed = parseWazeResponse(r.body);
    if (parsed.alertCount >= this.cap && depth < this.maxDepth) {
      node.children = quadrants(node.bbox).map((bbox) => ({ bbox, children: null }));
      const sub = await this.fetchNode(node, depth, true, signal);
      return { ...sub, requests: sub.requests + r.requests };
    }
    return { ok: true, items: parsed.items, alertCount: parsed.alertCount, requests: r.requests };
  }

  status(): SourceStatus {
    return this.core.status();
  }
}

export function createWazeSource(options: WazeSourceOptions): WazeSource {
  return new WazeSource(options);
}

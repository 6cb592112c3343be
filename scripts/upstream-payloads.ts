/**
 * Builders for upstream payloads in the exact schemas of the three live sources (Waze live-map
 * georss, TomTom incidentDetails v5, HERE v7 /incidents; see /work/shared/notes/UPSTREAM-SOURCES.md
 * §1.3, §3.2, §4.2 and the recorded samples in test/fixtures/upstream/). The content they build is
 * synthetic; the field names, types and quirks are the real ones (Waze `{x: lon, y: lat}`, the
 * string `"false"` of `reportByMunicipalityUser`, `delay: -1` for blocked jams, HERE `originalId`
 * and `{value, language}` texts…). Used by the demo generator, the scanner tests and the benchmark.
 */

/** A deterministic PRNG (mulberry32): the same seed gives the same recordings on every machine. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** A v4-shaped UUID drawn from `random` (deterministic when `random` is seeded). */
export function uuidFrom(random: () => number): string {
  const hex = Array.from({ length: 32 }, () => Math.floor(random() * 16).toString(16));
  hex[12] = '4';
  hex[16] = '89ab'[Math.floor(random() * 4)]!;
  const h = hex.join('');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

const round6 = (n: number) => Math.round(n * 1e6) / 1e6;

/** FNV-1a: a stable small number from a string (for node and serial ids). */
function stringHash(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193) >>> 0;
  return h;
}

/** `[lon, lat]` points starting at (lat, lon), `steps` segments of about `stepM` metres heading `bearingDeg`. */
export function linePoints(lat: number, lon: number, bearingDeg: number, steps: number, stepM = 180): [number, number][] {
  const rad = (bearingDeg * Math.PI) / 180;
  const dLat = (Math.cos(rad) * stepM) / 111_320;
  const dLon = (Math.sin(rad) * stepM) / (111_320 * Math.cos((lat * Math.PI) / 180));
  const out: [number, number][] = [];
  for (let i = 0; i <= steps; i++) out.push([round6(lon + dLon * i), round6(lat + dLat * i)]);
  return out;
}

// ---------------------------------------------------------------------------------------------
// Waze live-map georss
// ---------------------------------------------------------------------------------------------

export interface WazeAlertSpec {
  uuid: string;
  /** ACCIDENT, JAM, HAZARD, WEATHERHAZARD, ROAD_CLOSED, CONSTRUCTION, POLICE, CHIT_CHAT… */
  type: string;
  subtype?: string;
  lat: number;
  lon: number;
  pubMillis: number;
  street?: string;
  /** Waze's free-text city: in Turkey usually the district. */
  city?: string;
  /** 0–10; the scanner drops alerts under 5 unless `reportBy` is set. */
  reliability?: number;
  confidence?: number;
  reportBy?: string;
  reportDescription?: string;
  nThumbsUp?: number;
  roadType?: number;
  magvar?: number;
  /** The int in `alert-<int>/<uuid>`, matched by a blocked jam's `blockingAlertID`. */
  serial?: number;
}

export function wazeAlert(s: WazeAlertSpec): Record<string, unknown> {
  const serial = s.serial ?? 600_000_000 + (stringHash(s.uuid) % 99_999_999);
  const alert: Record<string, unknown> = {
    country: 'TU',
    nThumbsUp: s.nThumbsUp ?? 0,
    city: s.city,
    reportRating: 3,
    reportByMunicipalityUser: 'false',
    reliability: s.reliability ?? 7,
    type: s.type,
    fromNodeId: 398_000_000 + (serial % 1_000_000),
    uuid: s.uuid,
    speed: 0,
    reportMood: 1,
    subtype: s.subtype ?? '',
    street: s.street,
    additionalInfo: '',
    toNodeId: 398_000_017 + (serial % 1_000_000),
    id: `alert-${serial}/${s.uuid}`,
    nComments: 0,
    inscale: false,
    comments: [],
    confidence: s.confidence ?? 2,
    roadType: s.roadType ?? 2,
    magvar: s.magvar ?? 90,
    wazeData: `world,${round6(s.lon)},${round6(s.lat)},${s.uuid}`,
    location: { x: round6(s.lon), y: round6(s.lat) },
    pubMillis: s.pubMillis,
  };
  if (s.city === undefined) delete alert.city;
  if (s.street === undefined) delete alert.street;
  if (s.reportBy !== undefined) alert.reportBy = s.reportBy;
  if (s.reportDescription !== undefined) alert.reportDescription = s.reportDescription;
  return alert;
}

export interface WazeJamSpec {
  id: number;
  /** `[lon, lat]` points; the event's location is the first. */
  line: [number, number][];
  /** 0 free flow … 5 blocked; the scanner keeps ≥ 2. */
  level: number;
  speedKMH: number;
  /** Metres. */
  length: number;
  /** Seconds; -1 when blocked. */
  delay: number;
  pubMillis: number;
  street?: string;
  city?: string;
  endNode?: string;
  /** A level-5 jam caused by a closure: its alert (merged into one road_closure event). */
  blockedBy?: { uuid: string; serial: number; blockType: string; startMillis: number; cause?: Record<string, unknown> };
}

export function wazeJam(s: WazeJamSpec): Record<string, unknown> {
  const jam: Record<string, unknown> = {
    severity: s.level,
    country: 'TU',
    level: s.level,
    city: s.city,
    line: s.line.map(([x, y]) => ({ x, y })),
    speedKMH: s.speedKMH,
    length: s.length,
    turnType: 'NONE',
    type: 'NONE',
    uuid: s.id,
    endNode: s.endNode,
    speed: s.speedKMH / 3.6,
    segments: [{ fromNode: 398_200_000 + (s.id % 100_000), ID: 512_000_000 + (s.id % 1_000_000), toNode: 398_200_045 + (s.id % 100_000), isForward: true }],
    roadType: 3,
    delay: s.delay,
    updateMillis: s.pubMillis + 30_000,
    street: s.street,
    id: s.id,
    pubMillis: s.pubMillis,
  };
  for (const k of ['city', 'street', 'endNode'] as const) if (jam[k] === undefined) delete jam[k];
  if (s.blockedBy) {
    jam.blockingAlertID = s.blockedBy.serial;
    jam.blockingAlertUuid = s.blockedBy.uuid;
    jam.blockType = s.blockedBy.blockType;
    jam.blockStartTime = s.blockedBy.startMillis;
    jam.blockUpdate = s.blockedBy.startMillis + 60_000;
    jam.blockExpiration = s.blockedBy.startMillis + 7 * 24 * 3600_000;
    if (s.blockedBy.cause) jam.causeAlert = s.blockedBy.cause;
  }
  return jam;
}

/** A georss response: alerts, jams, and the one-minute window Waze stamps on every answer. */
export function wazeResponse(alerts: unknown[], jams: unknown[], atMillis: number): Record<string, unknown> {
  const end = Math.floor(atMillis / 60_000) * 60_000;
  const stamp = (ms: number) => {
    const d = new Date(ms).toISOString();
    return `${d.slice(0, 10)} ${d.slice(11, 19)}:${d.slice(20, 23)}`;
  };
  return {
    alerts,
    endTimeMillis: end,
    startTimeMillis: end - 60_000,
    startTime: stamp(end - 60_000),
    endTime: stamp(end),
    jams,
  };
}

// ---------------------------------------------------------------------------------------------
// TomTom Traffic Incident Details v5 (full `fields` projection)
// ---------------------------------------------------------------------------------------------

export interface TomTomSpec {
  id: string;
  /** 1 accident, 6 jam, 8 road closed, 9 road works, 14 broken-down vehicle… */
  iconCategory: number;
  /** 0 unknown, 1 minor, 2 moderate, 3 major, 4 undefined (closures). */
  magnitudeOfDelay: number;
  events: { description: string; code: number; iconCategory: number }[];
  /** `[lon, lat]` positions: one point, or a line. */
  coordinates: [number, number][];
  startTime: string;
  endTime?: string | null;
  from?: string;
  to?: string;
  length?: number;
  delay?: number | null;
  roadNumbers?: string[];
  probabilityOfOccurrence?: string;
  numberOfReports?: number | null;
  lastReportTime?: string | null;
}

export function tomtomIncident(s: TomTomSpec): Record<string, unknown> {
  const point = s.coordinates.length === 1;
  return {
    type: 'Feature',
    properties: {
      id: s.id,
      iconCategory: s.iconCategory,
      magnitudeOfDelay: s.magnitudeOfDelay,
      events: s.events,
      startTime: s.startTime,
      endTime: s.endTime ?? null,
      from: s.from ?? null,
      to: s.to ?? null,
      length: s.length ?? 0,
      delay: s.delay ?? null,
      roadNumbers: s.roadNumbers ?? [],
      timeValidity: 'present',
      probabilityOfOccurrence: s.probabilityOfOccurrence ?? 'certain',
      numberOfReports: s.numberOfReports ?? null,
      lastReportTime: s.lastReportTime ?? null,
      tmc: null,
    },
    geometry: point ? { type: 'Point', coordinates: s.coordinates[0] } : { type: 'LineString', coordinates: s.coordinates },
  };
}

export function tomtomResponse(incidents: unknown[]): Record<string, unknown> {
  return { incidents };
}

// ---------------------------------------------------------------------------------------------
// HERE Traffic API v7 /incidents (locationReferencing=shape, lang=tr-TR)
// ---------------------------------------------------------------------------------------------

export interface HereSpec {
  /** The stable `originalId`; `id` is the id of this update. */
  originalId: string;
  updateId?: string;
  /** accident, congestion, construction, disabledVehicle, roadHazard, roadClosure, weather… */
  type: string;
  typeDescription: string;
  criticality: 'critical' | 'major' | 'minor' | 'lowImpact';
  roadClosed?: boolean;
  codes: number[];
  description: string;
  summary?: string;
  /** `[lon, lat]` points of the shape (one link). */
  line: [number, number][];
  roadDescription?: string;
  lengthM: number;
  startTime: string;
  endTime: string;
  entryTime: string;
}

export function hereResult(s: HereSpec): Record<string, unknown> {
  const id = s.updateId ?? s.originalId;
  const location: Record<string, unknown> = {
    length: s.lengthM,
    shape: { links: [{ points: s.line.map(([lng, lat]) => ({ lat, lng })), length: s.lengthM }] },
  };
  if (s.roadDescription !== undefined) location.description = s.roadDescription;
  return {
    location,
    incidentDetails: {
      id,
      hrn: `here:traffic:incident:${id}`,
      originalId: s.originalId,
      originalHrn: `here:traffic:incident:${s.originalId}`,
      startTime: s.startTime,
      endTime: s.endTime,
      entryTime: s.entryTime,
      roadClosed: s.roadClosed ?? false,
      criticality: s.criticality,
      type: s.type,
      typeDescription: { value: s.typeDescription, language: 'tr-TR' },
      codes: s.codes,
      description: { value: s.description, language: 'tr-TR' },
      summary: { value: s.summary ?? s.typeDescription, language: 'tr-TR' },
      ...(s.roadClosed ? { junctionTraversability: 'intermediateClosedEdgeOpen' } : {}),
    },
  };
}

export function hereResponse(results: unknown[], sourceUpdated: string): Record<string, unknown> {
  return { sourceUpdated, results };
}

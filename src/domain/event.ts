/**
 * The event vocabulary shared by the scanner (which writes events) and the read model (which serves
 * them). Kept framework-free: neither Elysia nor drizzle is imported here.
 */

export const EVENT_TYPES = ['accident', 'jam', 'hazard', 'road_closure'] as const;
export type EventType = (typeof EVENT_TYPES)[number];

export const SEVERITIES = ['minor', 'moderate', 'major', 'unknown'] as const;
export type Severity = (typeof SEVERITIES)[number];

export const EVENT_STATUSES = ['active', 'cleared'] as const;
export type EventStatus = (typeof EVENT_STATUSES)[number];

export const SOURCE_NAMES = ['waze', 'tomtom', 'here', 'replay'] as const;
export type SourceName = (typeof SOURCE_NAMES)[number];

export const CHANGE_TYPES = ['created', 'updated', 'cleared'] as const;
export type ChangeType = (typeof CHANGE_TYPES)[number];

export interface LatLon {
  lat: number;
  lon: number;
}

/** GeoJSON LineString, `[lon, lat]` positions. */
export interface LineString {
  type: 'LineString';
  coordinates: [number, number][];
}

export interface JamDetails {
  speed_kmh: number | null;
  length_m: number | null;
  /** Seconds of delay versus free flow; null when the source does not say (or the road is blocked). */
  delay_s: number | null;
  /** 0 (free flow) … 5 (blocked), Waze's scale; null when unknown. */
  level: number | null;
}

export interface CityRef {
  slug: string;
  name: string;
  plate: number;
}

/** An event exactly as the API serves it (CONTRACT §2). Timestamps are RFC 3339 UTC strings. */
export interface TrafficEvent {
  id: string;
  type: EventType;
  subtype: string | null;
  severity: Severity;
  status: EventStatus;
  city: CityRef;
  district: string | null;
  location: LatLon;
  geometry: LineString | null;
  road: string | null;
  description: string | null;
  jam: JamDetails | null;
  reported_at: string;
  first_seen_at: string;
  last_seen_at: string;
  updated_at: string;
  cleared_at: string | null;
  source: { name: SourceName; id: string };
  confidence: number;
}

/**
 * One upstream item, normalized by a source adapter but not yet placed in a province or stored.
 * `sourceId` is the upstream's stable key (Waze alert uuid, TomTom id, HERE originalId…); the
 * scanner namespaces it into the event id.
 */
export interface NormalizedItem {
  source: SourceName;
  sourceId: string;
  type: EventType;
  subtype: string | null;
  severity: Severity;
  location: LatLon;
  geometry: LineString | null;
  road: string | null;
  district: string | null;
  description: string | null;
  jam: JamDetails | null;
  /** Epoch ms the source says the event started or was reported. */
  reportedAt: number;
  /** 0–1. */
  confidence: number;
}

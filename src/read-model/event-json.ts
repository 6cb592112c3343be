import { iso } from '../clock.ts';
import type { TrafficEvent } from '../domain/event.ts';
import type { EventRow } from '../db/schema/index.ts';
import { provinceByPlate } from '../provinces/index.ts';

/** The stored fields an Event is made of (the scanner's bookkeeping columns are not). */
export type ServedRow = Omit<EventRow, 'cells' | 'missedScans' | 'rev'>;

/** A stored row as the API serves it (CONTRACT §2). Used by the read model and the outbox alike. */
export function toApiEvent(row: ServedRow): TrafficEvent {
  const p = provinceByPlate(row.plate);
  return {
    id: row.id,
    type: row.type,
    subtype: row.subtype,
    severity: row.severity,
    status: row.status,
    city: p ? { slug: p.slug, name: p.name, plate: p.plate } : { slug: 'unknown', name: 'Unknown', plate: row.plate },
    district: row.district,
    location: { lat: row.lat, lon: row.lon },
    geometry: row.geometry ?? null,
    road: row.road,
    description: row.description,
    jam: row.jam ?? null,
    reported_at: iso(row.reportedAt),
    first_seen_at: iso(row.firstSeenAt),
    last_seen_at: iso(row.lastSeenAt),
    updated_at: iso(row.updatedAt),
    cleared_at: row.clearedAt === null ? null : iso(row.clearedAt),
    source: { name: row.sourceName, id: row.sourceId },
    confidence: row.confidence,
  };
}

/** A GeoJSON Feature carrying the Event's fields as properties (its geometry, else its point). */
export function toFeature(ev: TrafficEvent): object {
  return {
    type: 'Feature',
    id: ev.id,
    geometry: ev.geometry ?? { type: 'Point', coordinates: [ev.location.lon, ev.location.lat] },
    properties: ev,
  };
}

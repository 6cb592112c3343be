import type { TrafficEvent } from '../domain/event.ts';
import { haversineKm, type ListQuery } from '../read-model/query.ts';
import type { EventFilter } from './feed.ts';

/** The list filters (city, type, severity, bbox, near) applied to one Event, for the live stream. */
export function eventFilter(q: Pick<ListQuery, 'plate' | 'types' | 'severities' | 'bbox' | 'near'>): EventFilter {
  const { plate, types, severities, bbox, near } = q;
  return (ev: TrafficEvent) => {
    if (plate !== null && ev.city.plate !== plate) return false;
    if (types !== null && !types.has(ev.type)) return false;
    if (severities !== null && !severities.has(ev.severity)) return false;
    const { lat, lon } = ev.location;
    if (bbox !== null && (lon < bbox[0] || lat < bbox[1] || lon > bbox[2] || lat > bbox[3])) return false;
    if (near !== null && haversineKm(near.lat, near.lon, lat, lon) > near.radiusKm) return false;
    return true;
  };
}

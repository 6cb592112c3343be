import type { EventType, Severity } from '../domain/event.ts';

/** A list request after validation: every field already checked and typed. */
export interface ListQuery {
  plate: number | null;
  limit: number;
  cursor: Cursor | null;
  types: ReadonlySet<EventType> | null;
  severities: ReadonlySet<Severity> | null;
  bbox: [number, number, number, number] | null;
  near: { lat: number; lon: number; radiusKm: number } | null;
  /** Epoch ms; when set, events updated or cleared since then are included. */
  updatedSince: number | null;
  format: 'json' | 'geojson';
}

/** Keyset position: the last item of the previous page in (reported_at desc, id asc) order. */
export interface Cursor {
  reportedAt: number;
  id: string;
}

export function encodeCursor(c: Cursor): string {
  return Buffer.from(`1.${c.reportedAt}.${c.id}`, 'utf8').toString('base64url');
}

export function decodeCursor(s: string): Cursor | null {
  if (!/^[A-Za-z0-9_-]{1,400}$/.test(s)) return null;
  const text = Buffer.from(s, 'base64url').toString('utf8');
  const m = /^1\.(\d{1,15})\.([A-Za-z0-9_:.-]{1,200})$/.exec(text);
  if (m === null) return null;
  return { reportedAt: Number(m[1]), id: m[2]! };
}

const EARTH_KM = 6371.0088;

export function haversineKm(lat1: number, lon1: number, lat2: number, lon2: number): number {
  const r = Math.PI / 180;
  const dLat = (lat2 - lat1) * r;
  const dLon = (lon2 - lon1) * r;
  const a = Math.sin(dLat / 2) ** 2 + Math.cos(lat1 * r) * Math.cos(lat2 * r) * Math.sin(dLon / 2) ** 2;
  return 2 * EARTH_KM * Math.asin(Math.min(1, Math.sqrt(a)));
}

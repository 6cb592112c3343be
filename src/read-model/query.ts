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
  /**
   * History pages only: the range of the first page (epoch ms). A range left open — no `to`
   * ("until now"), no `from` ("24 hours ago") — is pinned by the cursor, so later pages read the
   * same range and events newer than the first page cannot slip into them.
   */
  range?: { from: number; to: number };
}

export function encodeCursor(c: Cursor): string {
  const text = c.range === undefined ? `1.${c.reportedAt}.${c.id}` : `2.${c.reportedAt}.${c.range.from}.${c.range.to}.${c.id}`;
  return Buffer.from(text, 'utf8').toString('base64url');
}

const ID = '([A-Za-z0-9_:.-]{1,200})';
const MS = '(\\d{1,15})';
const V1 = new RegExp(`^1\\.${MS}\\.${ID}$`);
const V2 = new RegExp(`^2\\.${MS}\\.${MS}\\.${MS}\\.${ID}$`);

export function decodeCursor(s: string): Cursor | null {
  if (!/^[A-Za-z0-9_-]{1,400}$/.test(s)) return null;
  const text = Buffer.from(s, 'base64url').toString('utf8');
  const v1 = V1.exec(text);
  if (v1 !== null) return { reportedAt: Number(v1[1]), id: v1[2]! };
  const v2 = V2.exec(text);
  if (v2 === null) return null;
  const from = Number(v2[2]);
  const to = Number(v2[3]);
  if (from > to) return null;
  return { reportedAt: Number(v2[1]), id: v2[4]!, range: { from, to } };
}

const EARTH_KM = 6371.0088;

export function haversineKm(lat1: number, lon1: number, lat2: number, lon2: number): number {
  const r = Math.PI / 180;
  const dLat = (lat2 - lat1) * r;
  const dLon = (lon2 - lon1) * r;
  const a = Math.sin(dLat / 2) ** 2 + Math.cos(lat1 * r) * Math.cos(lat2 * r) * Math.sin(dLon / 2) ** 2;
  return 2 * EARTH_KM * Math.asin(Math.min(1, Math.sqrt(a)));
}

import { iso } from '../clock.ts';
import type { CityRef } from '../domain/event.ts';
import { PreparedBody } from './prepared-body.ts';
import { encodeCursor, type Cursor } from './query.ts';

/** One event ready to place in a page: its JSON bytes, and what its GeoJSON Feature needs. */
export interface RenderableEvent {
  id: string;
  json: Uint8Array;
  /** GeoJSON geometry JSON of the Feature form (the event's line, or its point). */
  geometry: string;
}

export interface HistoryMeta {
  status: 'active' | 'cleared' | 'all';
  from: number;
  to: number;
}

export interface ListRender {
  events: readonly RenderableEvent[];
  limit: number;
  total: number;
  /** Keyset position of the page's last item when more follow, else null. */
  next: Cursor | null;
  format: 'json' | 'geojson';
  path: string;
  /** The request's parameters, sorted, for the `next` link. */
  sortedParams: [string, string][];
  city: CityRef | null;
  generatedAt: number;
  dataUpdatedAt: number | null;
  updateIntervalSeconds: number;
  history?: HistoryMeta;
}

const encoder = new TextEncoder();
const COMMA = encoder.encode(',');
const CLOSE = encoder.encode('}');

/**
 * The list envelope (CONTRACT §2) or its GeoJSON FeatureCollection form, assembled once from the
 * events' ready UTF-8 bytes: nothing is parsed or re-serialized.
 */
export function renderList(r: ListRender): { body: PreparedBody; contentType: string } {
  const nextCursor = r.next === null ? null : encodeCursor(r.next);
  let next: string | null = null;
  if (nextCursor !== null) {
    const p = new URLSearchParams(r.sortedParams.filter(([k]) => k !== 'cursor'));
    if (r.format === 'geojson') p.set('format', 'geojson');
    p.set('cursor', nextCursor);
    next = `${r.path}?${p.toString()}`;
  }
  const pagination = JSON.stringify({ limit: r.limit, total: r.total, next_cursor: nextCursor, next });
  const meta = JSON.stringify({
    api_version: '1.0',
    generated_at: iso(r.generatedAt),
    data_updated_at: r.dataUpdatedAt === null ? null : iso(r.dataUpdatedAt),
    update_interval_seconds: r.updateIntervalSeconds,
    window_hours: 24,
    city: r.city,
    ...(r.history ? { history: { status: r.history.status, from: iso(r.history.from), to: iso(r.history.to) } } : {}),
  });
  const geo = r.format === 'geojson';
  const parts: Uint8Array[] = [encoder.encode(geo ? '{"type":"FeatureCollection","features":[' : '{"data":[')];
  r.events.forEach((e, i) => {
    if (i > 0) parts.push(COMMA);
    if (geo) {
      parts.push(encoder.encode(`{"type":"Feature","id":${JSON.stringify(e.id)},"geometry":${e.geometry},"properties":`), e.json, CLOSE);
    } else parts.push(e.json);
  });
  parts.push(encoder.encode(`],"pagination":${pagination},"meta":${meta}}`));
  let size = 0;
  for (const p of parts) size += p.byteLength;
  const bytes = new Uint8Array(size);
  let at = 0;
  for (const p of parts) {
    bytes.set(p, at);
    at += p.byteLength;
  }
  return { body: new PreparedBody(bytes), contentType: geo ? 'application/geo+json; charset=utf-8' : 'application/json; charset=utf-8' };
}

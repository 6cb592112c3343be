import { iso } from '../clock.ts';
import type { CityRef } from '../domain/event.ts';
import { PreparedBody } from './prepared-body.ts';
import { encodeCursor, type Cursor } from './query.ts';

/** One event ready to place in a page: its JSON, and its GeoJSON Feature made on demand. */
export interface RenderableEvent {
  json: string;
  feature(): string;
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

/** The list envelope (CONTRACT §2) or its GeoJSON FeatureCollection form, serialized once. */
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
  let text: string;
  if (r.format === 'geojson') {
    text = `{"type":"FeatureCollection","features":[${r.events.map((e) => e.feature()).join(',')}],"pagination":${pagination},"meta":${meta}}`;
  } else {
    text = `{"data":[${r.events.map((e) => e.json).join(',')}],"pagination":${pagination},"meta":${meta}}`;
  }
  return { body: new PreparedBody(text), contentType: r.format === 'geojson' ? 'application/geo+json; charset=utf-8' : 'application/json; charset=utf-8' };
}

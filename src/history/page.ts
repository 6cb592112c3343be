import type { Database } from 'bun:sqlite';
import type { CityRef } from '../domain/event.ts';
import { toApiEvent, toFeature } from '../read-model/event-json.ts';
import { sortedParams, type PreparedPage } from '../read-model/read-model.ts';
import { renderList } from '../read-model/render.ts';
import { queryHistory, type HistoryQuery } from './history.ts';

const encoder = new TextEncoder();

export interface HistoryPageContext {
  path: string;
  params: URLSearchParams;
  city: CityRef | null;
  now: number;
  dataUpdatedAt: number | null;
  updateIntervalSeconds: number;
}

/** A history page from SQLite, in exactly the list envelope the 24-hour view serves. */
export function historyPage(db: Database, q: HistoryQuery, ctx: HistoryPageContext): PreparedPage {
  const page = queryHistory(db, q);
  const { body, contentType } = renderList({
    events: page.rows.map((row) => {
      const ev = toApiEvent(row);
      const feature = toFeature(ev) as { geometry: object };
      return { id: ev.id, json: encoder.encode(JSON.stringify(ev)), geometry: JSON.stringify(feature.geometry) };
    }),
    limit: q.limit,
    total: page.total,
    next: page.next,
    format: q.format,
    path: ctx.path,
    sortedParams: sortedParams(ctx.params),
    city: ctx.city,
    generatedAt: ctx.now,
    dataUpdatedAt: ctx.dataUpdatedAt,
    updateIntervalSeconds: ctx.updateIntervalSeconds,
    history: { status: q.status, from: q.from, to: q.to },
  });
  return { body, contentType, lastModified: ctx.dataUpdatedAt ?? ctx.now };
}

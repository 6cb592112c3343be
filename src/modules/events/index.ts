import type { Database } from 'bun:sqlite';
import { Elysia } from 'elysia';
import type { Clock } from '../../clock.ts';
import { strictQuery } from '../../http/strict-query.ts';
import { sendPage } from '../../http/send.ts';
import { accessContext } from '../../http/plugins/limits.ts';
import { historyPage } from '../../history/page.ts';
import type { ReadModel } from '../../read-model/read-model.ts';
import { decodeIfEncoded } from '../../provinces/index.ts';
import { PARAMETERS, parameterDocs } from '../parameters.ts';
import { errorResponses } from '../responses.ts';
import { CityListQuery, CityParams, EventFeatureCollection, EventList, ListQuery } from './model.ts';
import { cityRef, parseListQuery, resolveCityOrThrow, type ParsedList, type RawListParams } from './service.ts';
import type { CityRef } from '../../domain/event.ts';

const checkList = strictQuery(ListQuery);
const checkCityList = strictQuery(CityListQuery);

function rawQueryOf(url: string): string {
  const q = url.indexOf('?');
  return q === -1 ? '' : url.slice(q + 1);
}

function paramsOf(url: string): URLSearchParams {
  const q = url.indexOf('?');
  return new URLSearchParams(q === -1 ? '' : url.slice(q + 1));
}

const listDescription = `Active events seen in the last 24 hours, newest \`reported_at\` first (ties by id).
Pages by opaque cursor (\`pagination.next_cursor\` / \`pagination.next\`), stable while scans change the data.
\`format=geojson\` or \`Accept: application/geo+json\` returns a GeoJSON FeatureCollection.
Conditional requests with \`If-None-Match\` answer 304.`;

export interface EventsDeps {
  readModel: ReadModel;
  clock: Clock;
  /** History (Enterprise) reads SQLite directly; the 24-hour view never does. */
  history: { sqlite: Database; historyDays: number };
}

export function eventsRoutes(deps: EventsDeps) {
  const { readModel, clock } = deps;
  /** The next-page link's parameters, made only when a page is built; the list route names the city it resolved. */
  const linkParams = (url: string, citySlug: string | null) => () => {
    const p = paramsOf(url);
    if (citySlug !== null) p.set('city', citySlug);
    return p;
  };
  /** The 24-hour view, from memory. */
  const fromView = (request: Request, query: ParsedList['query'], path: string, city: CityRef | null, citySlug: string | null) =>
    sendPage(request, readModel.listPage({ path, rawQuery: rawQueryOf(request.url), params: linkParams(request.url, citySlug), query, city }));
  /** History, from SQLite, when the request reaches past the 24-hour view (Enterprise). */
  const fromHistory = (request: Request, query: ParsedList['query'], range: NonNullable<ParsedList['history']>, path: string, city: CityRef | null, citySlug: string | null) =>
    sendPage(
      request,
      historyPage(deps.history.sqlite, { ...query, ...range }, {
        path,
        params: linkParams(request.url, citySlug)(),
        city,
        now: clock(),
        dataUpdatedAt: readModel.dataUpdatedAt,
        updateIntervalSeconds: readModel.updateIntervalSeconds,
      }),
    );
  // The handlers end in a conditional, not `return f(…)`, so Elysia sees them as synchronous
  // (test/http/sync-path.test.ts).
  return new Elysia({ name: 'trafik.events' })
    .use(accessContext)
    .get(
      '/api/v1/events',
      ({ request, access }) => {
        const raw: RawListParams = checkList(request.url);
        const city = raw.city === undefined ? null : resolveCityOrThrow(raw.city, 'query');
        const parsed = parseListQuery(raw, {
          accept: request.headers.get('accept'),
          now: clock(),
          plate: city?.plate ?? null,
          enterprise: access.plan === 'enterprise',
          historyDays: deps.history.historyDays,
        });
        const ref = city === null ? null : cityRef(city);
        const slug = city === null ? null : city.slug;
        return parsed.history === null ? fromView(request, parsed.query, '/api/v1/events', ref, slug) : fromHistory(request, parsed.query, parsed.history, '/api/v1/events', ref, slug);
      },
      {
        response: { 200: EventList, ...errorResponses(400, 403) },
        detail: {
          tags: ['Events'],
          summary: 'List events across Turkey',
          description: listDescription,
          operationId: 'listEvents',
          [PARAMETERS]: parameterDocs({ query: ListQuery }),
        },
      },
    )
    .get(
      '/api/v1/events/:city',
      ({ params, request, access }) => {
        const query: RawListParams = checkCityList(request.url);
        // Elysia leaves a path parameter it cannot percent-decode undefined: the raw segment is
        // then the best name to show back in the 404.
        const segment = typeof params.city === 'string' ? params.city : rawCitySegment(request.url);
        // Path params normally arrive decoded; a doubly-encoded or raw one is decoded once more.
        const city = resolveCityOrThrow(decodeIfEncoded(segment), 'path');
        const parsed = parseListQuery(query, {
          accept: request.headers.get('accept'),
          now: clock(),
          plate: city.plate,
          enterprise: access.plan === 'enterprise',
          historyDays: deps.history.historyDays,
        });
        const path = `/api/v1/events/${city.slug}`;
        return parsed.history === null ? fromView(request, parsed.query, path, cityRef(city), null) : fromHistory(request, parsed.query, parsed.history, path, cityRef(city), null);
      },
      {
        response: { 200: EventList, ...errorResponses(400, 403, 404) },
        detail: {
          tags: ['Events'],
          summary: 'List events in one province',
          description: `${listDescription}\n\nThe \`{city}\` segment accepts any spelling of the 81 provinces — Turkish or ASCII letters in any case, percent-encoded or NFD, apostrophe suffixes (İstanbul'da), short and historic names (Antep, Urfa, Maraş, İzmit…) and plate codes (34, 06, 6). An unknown name answers 404 \`unknown_city\` with suggestions; it is never auto-corrected. A valid city with no events is 200 with an empty \`data\`.`,
          operationId: 'listCityEvents',
          [PARAMETERS]: parameterDocs({ path: CityParams, query: CityListQuery }),
        },
      },
    )
    .model({ EventList, EventFeatureCollection });
}

function rawCitySegment(url: string): string {
  const start = url.indexOf('/api/v1/events/') + '/api/v1/events/'.length;
  const q = url.indexOf('?', start);
  return url.slice(start, q === -1 ? undefined : q);
}

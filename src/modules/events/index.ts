import type { Database } from 'bun:sqlite';
import { Elysia } from 'elysia';
import type { Clock } from '../../clock.ts';
import { strictQuery } from '../../http/strict-query.ts';
import { sendPage } from '../../http/send.ts';
import { accessContext } from '../../http/plugins/limits.ts';
import { historyPage } from '../../history/page.ts';
import type { ReadModel } from '../../read-model/read-model.ts';
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
  /** The 24-hour view from memory, or history from SQLite when the request reaches past it. */
  const page = (request: Request, parsed: ParsedList, path: string, params: () => URLSearchParams, city: CityRef | null) =>
    sendPage(
      request,
      parsed.history === null
        ? readModel.listPage({ path, rawQuery: rawQueryOf(request.url), params, query: parsed.query, city })
        : historyPage(deps.history.sqlite, { ...parsed.query, ...parsed.history }, {
            path,
            params: params(),
            city,
            now: clock(),
            dataUpdatedAt: readModel.dataUpdatedAt,
            updateIntervalSeconds: readModel.updateIntervalSeconds,
          }),
    );
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
        const params = () => {
          const p = paramsOf(request.url);
          if (city !== null) p.set('city', city.slug);
          return p;
        };
        return page(request, parsed, '/api/v1/events', params, city && cityRef(city));
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
        const city = resolveCityOrThrow(decodeSegment(segment), 'path');
        const parsed = parseListQuery(query, {
          accept: request.headers.get('accept'),
          now: clock(),
          plate: city.plate,
          enterprise: access.plan === 'enterprise',
          historyDays: deps.history.historyDays,
        });
        return page(request, parsed, `/api/v1/events/${city.slug}`, () => paramsOf(request.url), cityRef(city));
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

/** Path params normally arrive decoded; a doubly-encoded or raw one is decoded once more, safely. */
function decodeSegment(s: string): string {
  if (!s.includes('%')) return s;
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}

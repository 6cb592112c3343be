import { Elysia } from 'elysia';
import { sendPage } from '../../http/send.ts';
import { strictQuery } from '../../http/strict-query.ts';
import type { ReadModel } from '../../read-model/read-model.ts';
import { errorResponses } from '../responses.ts';
import { Stats, StatsQuery } from './model.ts';

const checkStats = strictQuery(StatsQuery);

export function statsRoutes(deps: { readModel: ReadModel }) {
  return new Elysia({ name: 'trafik.stats' }).get('/api/v1/stats', ({ query, request }) => sendPage(request, deps.readModel.statsPage(query.top ?? 10)), {
    transform: ({ request }) => checkStats(request.url),
    query: StatsQuery,
    response: { 200: Stats, ...errorResponses(400, 403) },
    detail: {
      tags: ['Statistics'],
      summary: 'Aggregate statistics over the 24-hour window',
      description: 'Counts of active events, by type (all four keys always present) and severity, the busiest provinces, and how many events were created and cleared in the last 24 hours. Supports If-None-Match → 304.',
      operationId: 'getStats',
      responses: { 304: { description: 'Not modified (If-None-Match matched the ETag)' } },
    },
  });
}

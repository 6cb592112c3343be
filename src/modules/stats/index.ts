import type { Database } from 'bun:sqlite';
import { Elysia } from 'elysia';
import type { Clock } from '../../clock.ts';
import { accessContext } from '../../http/plugins/limits.ts';
import { sendPage } from '../../http/send.ts';
import { strictQuery } from '../../http/strict-query.ts';
import type { ReadModel } from '../../read-model/read-model.ts';
import { PARAMETERS, parameterDocs } from '../parameters.ts';
import { errorResponses } from '../responses.ts';
import { Stats, StatsQuery } from './model.ts';
import { parseStatsRange, rangeStatsPage } from './service.ts';

const checkStats = strictQuery(StatsQuery);

export interface StatsDeps {
  readModel: ReadModel;
  clock: Clock;
  history: { sqlite: Database; historyDays: number };
}

export function statsRoutes(deps: StatsDeps) {
  return new Elysia({ name: 'trafik.stats' }).use(accessContext).get(
    '/api/v1/stats',
    ({ request, access }) => {
      const query = checkStats(request.url);
      const now = deps.clock();
      const top = query.top ?? 10;
      const range = parseStatsRange(query, { now, enterprise: access.plan === 'enterprise', historyDays: deps.history.historyDays });
      // A conditional, not `return f(…)`: Elysia then sees a synchronous handler (test/http/sync-path.test.ts).
      return range === null ? sendPage(request, deps.readModel.statsPage(top)) : sendPage(request, rangeStatsPage(deps.history.sqlite, deps.readModel, range, top, now));
    },
    {
    response: { 200: Stats, ...errorResponses(400, 403) },
    detail: {
      tags: ['Statistics'],
      summary: 'Aggregate statistics over the 24-hour window',
      description: 'Counts of active events, by type (all four keys always present) and severity, the busiest provinces, and how many events were created and cleared in the last 24 hours. Supports If-None-Match → 304. Enterprise: `from`/`to` count the events seen during that range, from the stored history, and add `range`.',
      operationId: 'getStats',
      [PARAMETERS]: parameterDocs({ query: StatsQuery }),
    },
  },
  );
}

import { Elysia, t } from 'elysia';
import { strictQuery } from '../../http/strict-query.ts';
import { errorResponses } from '../responses.ts';
import { Health } from './model.ts';
import type { HealthReport } from './service.ts';

const NoQuery = t.Object({});
const checkNoQuery = strictQuery(NoQuery);

export function healthRoutes(deps: { check: () => HealthReport }) {
  return new Elysia({ name: 'trafik.health' }).get(
    '/api/v1/health',
    () => {
      const report = deps.check();
      return new Response(JSON.stringify(report), {
        status: report.status === 'fail' ? 503 : 200,
        headers: { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store' },
      });
    },
    {
      transform: ({ request }) => {
        checkNoQuery(request.url);
      },
      response: { 200: Health, 503: { ...Health, description: 'status is fail: the database is unreachable or no scan has succeeded for 24 hours' }, ...errorResponses(400) },
      detail: {
        tags: ['Health'],
        summary: 'Service health for monitoring and uptime checks',
        description: '`pass` or `warn` answer 200, `fail` answers 503. `warn`: no scan completed yet, the last successful scan is older than two intervals, some cells failed, or a source backs off. `fail`: the database does not answer, or no scan has succeeded for 24 hours. Never cached; never counts against the monthly quota.',
        operationId: 'getHealth',
      },
    },
  );
}

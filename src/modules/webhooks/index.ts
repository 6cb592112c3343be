import type { Database } from 'bun:sqlite';
import { Elysia, t } from 'elysia';
import { accessContext, requireEnterprise } from '../../http/plugins/limits.ts';
import { strictQuery } from '../../http/strict-query.ts';
import { listSubscriptions } from '../../webhooks/endpoints.ts';
import { errorResponses } from '../responses.ts';
import { WebhookList } from './model.ts';

const NoQuery = t.Object({});
const checkNoQuery = strictQuery(NoQuery);

/** The calling key's webhook subscriptions with delivery stats: read-only, like the rest of the API. */
export function webhooksRoutes(deps: { sqlite: Database }) {
  return new Elysia({ name: 'trafik.webhooks' }).use(accessContext).get(
    '/api/v1/webhooks',
    ({ access }) => {
      requireEnterprise(access, 'webhooks', 'Webhooks belong to the Enterprise plan; call with an Enterprise API key.');
      const body = { data: listSubscriptions(deps.sqlite, access.keyId!) };
      return new Response(JSON.stringify(body), { headers: { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store' } });
    },
    {
      transform: ({ request }) => {
        checkNoQuery(request.url);
      },
      response: { 200: WebhookList, ...errorResponses(400, 403) },
      detail: {
        tags: ['Webhooks'],
        summary: "The calling key's webhook subscriptions (Enterprise)",
        description:
          'Subscriptions are managed by the operator with `trafik webhooks add|list|remove|test`; this lists those of the calling Enterprise key with their delivery state: status (active, or disabled with the reason), last success and failure, consecutive failures, pending, delivered and given-up deliveries. Secrets are never returned. Free: 403 plan_required.',
        operationId: 'listWebhooks',
      },
    },
  );
}

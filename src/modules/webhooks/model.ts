import { t } from 'elysia';
import { EVENT_TYPES } from '../../domain/event.ts';
import { CityRef, Int, Timestamp } from '../shared-model.ts';

const MaybeTime = (d: string) => t.Union([Timestamp(d), t.Null()]);

export const WebhookSubscription = t.Object(
  {
    id: t.String({ examples: ['whk_3Xb9QfT1pLk2Zr8aW0cE'] }),
    url: t.String({ format: 'uri' }),
    filters: t.Object({
      types: t.Union([t.Array(t.UnionEnum(EVENT_TYPES)), t.Null()], { description: 'null = every type' }),
      cities: t.Union([t.Array(CityRef), t.Null()], { description: 'null = every province' }),
    }),
    status: t.UnionEnum(['active', 'disabled']),
    disabled_reason: t.Union([t.String(), t.Null()], { examples: ['410 Gone from receiver'] }),
    disabled_at: MaybeTime('When it was disabled'),
    created_at: Timestamp('When it was added'),
    last_success_at: MaybeTime('Last 2xx from the receiver'),
    last_failure_at: MaybeTime('Last failed attempt'),
    consecutive_failures: Int({ minimum: 0 }),
    failing_since: MaybeTime('Start of the current run of failures; 5 days of it disable the endpoint'),
    pending_deliveries: Int({ minimum: 0, description: 'Deliveries still to be sent or retried' }),
    delivered_count: Int({ minimum: 0 }),
    failed_count: Int({ minimum: 0, description: 'Deliveries given up after the last retry' }),
  },
  { title: 'WebhookSubscription', description: 'Secrets are never returned: they are shown once, by the CLI, when the subscription is added.' },
);

export const WebhookList = t.Object({ data: t.Array(WebhookSubscription) }, { title: 'WebhookList' });

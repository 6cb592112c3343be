import { index, integer, sqliteTable, text } from 'drizzle-orm/sqlite-core';
import type { ChangeType, EventType } from '../../domain/event.ts';
import { apiKeys } from './limits.ts';

export type EndpointStatus = 'active' | 'disabled';
export type DeliveryStatus = 'pending' | 'delivered' | 'failed';

/** An Enterprise key's webhook subscription. Managed by the CLI, never over HTTP. */
export const webhookEndpoints = sqliteTable(
  'webhook_endpoints',
  {
    id: text('id').primaryKey(),
    keyId: text('key_id')
      .notNull()
      .references(() => apiKeys.id),
    url: text('url').notNull(),
    /** `whsec_<base64>`; needed in clear to sign, so it is shown once and never returned by the API. */
    secret: text('secret').notNull(),
    /** null = every type. */
    types: text('types', { mode: 'json' }).$type<EventType[]>(),
    /** Province plates; null = every province. */
    cities: text('cities', { mode: 'json' }).$type<number[]>(),
    status: text('status').$type<EndpointStatus>().notNull().default('active'),
    disabledReason: text('disabled_reason'),
    disabledAt: integer('disabled_at'),
    createdAt: integer('created_at').notNull(),
    lastSuccessAt: integer('last_success_at'),
    lastFailureAt: integer('last_failure_at'),
    consecutiveFailures: integer('consecutive_failures').notNull().default(0),
    /** Start of the current run of failures; 5 days of it disables the endpoint. */
    failingSince: integer('failing_since'),
    /** Last event_changes.seq already fanned out to this endpoint. */
    cursorSeq: integer('cursor_seq').notNull().default(0),
  },
  (t) => [index('webhook_endpoints_key_idx').on(t.keyId)],
);

/** One change for one endpoint: the unit of delivery, retried until delivered or given up. */
export const webhookDeliveries = sqliteTable(
  'webhook_deliveries',
  {
    id: integer('id').primaryKey({ autoIncrement: true }),
    endpointId: text('endpoint_id')
      .notNull()
      .references(() => webhookEndpoints.id),
    changeSeq: integer('change_seq').notNull(),
    eventId: text('event_id').notNull(),
    /** The `webhook-id` header: the same on every retry, the consumer's idempotency key. */
    msgId: text('msg_id').notNull().unique(),
    eventType: text('event_type').$type<`traffic_event.${ChangeType}`>().notNull(),
    /** The exact body sent (and signed) on every attempt. */
    payload: text('payload').notNull(),
    status: text('status').$type<DeliveryStatus>().notNull().default('pending'),
    attempts: integer('attempts').notNull().default(0),
    nextAttemptAt: integer('next_attempt_at').notNull(),
    lastAttemptAt: integer('last_attempt_at'),
    lastStatus: integer('last_status'),
    lastError: text('last_error'),
    createdAt: integer('created_at').notNull(),
    deliveredAt: integer('delivered_at'),
  },
  (t) => [
    index('webhook_deliveries_due_idx').on(t.status, t.nextAttemptAt),
    index('webhook_deliveries_endpoint_idx').on(t.endpointId, t.changeSeq),
  ],
);

export type WebhookEndpointRow = typeof webhookEndpoints.$inferSelect;
export type WebhookDeliveryRow = typeof webhookDeliveries.$inferSelect;

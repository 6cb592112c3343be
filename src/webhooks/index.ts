/** Enterprise webhooks (CONTRACT §6): subscriptions, fan-out from the outbox, signed delivery. See README.md. */
export { sqliteOf, type DbHandle } from './db.ts';
export {
  addEndpoint,
  getEndpoint,
  listAllSubscriptions,
  listEndpoints,
  listSubscriptions,
  parseCities,
  parseTypes,
  removeEndpoint,
  WebhookInputError,
  ENDPOINT_ID_PATTERN,
  type AddEndpointInput,
  type AddedEndpoint,
  type EndpointRecord,
  type WebhookSubscriptionView,
} from './endpoints.ts';
export { changeBody, fanOut, fanOutBatch, messageId, type FanOutResult } from './fanout.ts';
export { DEFAULT_TIMEOUT_MS, DISABLE_AFTER_FAILING_MS, MAX_ATTEMPTS, RETRY_SCHEDULE_MS, parseRetryAfter, retryDelay } from './policy.ts';
export { sendAttempt, type AttemptOutcome } from './send.ts';
export { generateSecret, secretKey, signature, webhookHeaders } from './signing.ts';
export { blockedAddressReason, checkWebhookUrl, systemLookup, type LookupAddress, type LookupFn } from './ssrf.ts';
export { sendTestMessage, type TestMessageResult } from './test-message.ts';
export { createWebhookWorker, startWebhookWorker, type WebhookWorker, type WebhookWorkerControl, type WebhookWorkerDeps, type WorkerStats } from './worker.ts';

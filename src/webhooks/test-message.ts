/** `trafik webhooks test ID`: one signed `webhook.test` message, sent now, outside the delivery queue. */
import { iso } from '../clock.ts';
import type { DbHandle } from './db.ts';
import { randomBase62 } from '../keys/format.ts';
import { getEndpoint, WebhookInputError } from './endpoints.ts';
import { DEFAULT_TIMEOUT_MS } from './policy.ts';
import { sendAttempt, type AttemptOutcome } from './send.ts';
import { secretKey } from './signing.ts';
import type { LookupFn } from './ssrf.ts';

export interface TestMessageResult extends AttemptOutcome {
  msgId: string;
  endpointId: string;
  url: string;
}

export function testBody(endpointId: string, now: number): string {
  return JSON.stringify({ type: 'webhook.test', timestamp: iso(now), data: { endpoint_id: endpointId, sent_at: iso(now) } });
}

/** Nothing is recorded: the endpoint's stats and queue are untouched. */
export async function sendTestMessage(
  handle: DbHandle,
  endpointId: string,
  opts: { now: number; allowPrivate: boolean; lookup?: LookupFn; timeoutMs?: number },
): Promise<TestMessageResult> {
  const ep = getEndpoint(handle, endpointId);
  if (ep === null) throw new WebhookInputError(`unknown webhook '${endpointId}'`);
  const msgId = `msg_${ep.id}_test_${randomBase62(12)}`;
  const out = await sendAttempt({
    url: ep.url,
    key: secretKey(ep.secret),
    msgId,
    body: testBody(ep.id, opts.now),
    now: opts.now,
    timeoutMs: opts.timeoutMs ?? DEFAULT_TIMEOUT_MS,
    allowPrivate: opts.allowPrivate,
    ...(opts.lookup ? { lookup: opts.lookup } : {}),
  });
  return { ...out, msgId, endpointId: ep.id, url: ep.url };
}

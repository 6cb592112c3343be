/**
 * One HTTP attempt: SSRF re-check, signed POST with a hard timeout, no redirects followed, the
 * response read (bounded) so the connection can be reused, and the outcome as a value. Errors
 * name the failure, never the secret or the body.
 */
import { parseRetryAfter, RETRY_AFTER_STATUSES } from './policy.ts';
import { webhookHeaders } from './signing.ts';
import { checkWebhookUrl, type LookupFn } from './ssrf.ts';

export interface AttemptOutcome {
  /** 2xx. */
  ok: boolean;
  /** The receiver's status, null when no response came (refused, network error, timeout). */
  status: number | null;
  /** Why it failed, one line; null on success. */
  error: string | null;
  /** Retry-After of a 429/502/503/504, in ms; null otherwise. */
  retryAfterMs: number | null;
  /** 410 Gone: the receiver asks us to stop. */
  gone: boolean;
  /** The SSRF guard refused the target; nothing was sent. */
  refused: boolean;
  latencyMs: number;
}

export interface AttemptRequest {
  url: string;
  key: Uint8Array;
  msgId: string;
  body: string;
  /** The attempt time (ms): `webhook-timestamp` and Retry-After dates are relative to it. */
  now: number;
  timeoutMs: number;
  allowPrivate: boolean;
  lookup?: LookupFn;
}

const MAX_RESPONSE_BYTES = 64 * 1024;

async function drain(res: Response): Promise<void> {
  if (res.body === null) return;
  const reader = res.body.getReader();
  let n = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return;
      n += value.byteLength;
      if (n > MAX_RESPONSE_BYTES) {
        await reader.cancel();
        return;
      }
    }
  } catch {
    // A body cut short changes nothing: the status already decided the outcome.
  }
}

function networkError(err: unknown, timeoutMs: number): string {
  const name = (err as { name?: string }).name;
  if (name === 'TimeoutError' || name === 'AbortError') return `timeout: no response within ${timeoutMs} ms`;
  const code = (err as { code?: string }).code;
  const message = (err instanceof Error ? err.message : String(err)).split('\n')[0]!.replace(code ? `${code}: ` : '', '');
  return `network error: ${code ? `${code}: ` : ''}${message}`.slice(0, 300);
}

export async function sendAttempt(req: AttemptRequest): Promise<AttemptOutcome> {
  const started = performance.now();
  const check = await checkWebhookUrl(req.url, { allowPrivate: req.allowPrivate, ...(req.lookup ? { lookup: req.lookup } : {}) });
  if (!check.ok) return { ok: false, status: null, error: `refused: ${check.reason}`, retryAfterMs: null, gone: false, refused: true, latencyMs: performance.now() - started };
  const headers = webhookHeaders(req.key, req.msgId, Math.floor(req.now / 1000), req.body);
  let res: Response;
  try {
    res = await fetch(check.url, { method: 'POST', headers, body: req.body, redirect: 'manual', signal: AbortSignal.timeout(req.timeoutMs) });
    await drain(res);
  } catch (err) {
    return { ok: false, status: null, error: networkError(err, req.timeoutMs), retryAfterMs: null, gone: false, refused: false, latencyMs: performance.now() - started };
  }
  const latencyMs = performance.now() - started;
  const status = res.status;
  if (status >= 200 && status < 300) return { ok: true, status, error: null, retryAfterMs: null, gone: false, refused: false, latencyMs };
  const retryAfterMs = RETRY_AFTER_STATUSES.has(status) ? parseRetryAfter(res.headers.get('retry-after'), req.now) : null;
  const error = status >= 300 && status < 400 ? `HTTP ${status} (redirects are not followed)` : `HTTP ${status}`;
  return { ok: false, status, error, retryAfterMs, gone: status === 410, refused: false, latencyMs };
}

/**
 * When to try again. Attempt 1 goes out as soon as the change is fanned out; attempt n+1 follows
 * attempt n after RETRY_SCHEDULE_MS[n-1] ± 10 % (Standard Webhooks / Svix: about 5 s, 5 min,
 * 30 min, 2 h, 5 h, 10 h, 24 h). A failure of the 8th attempt (after the 24 h step) gives up.
 */
export const RETRY_SCHEDULE_MS: readonly number[] = [5_000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000, 86_400_000];
export const MAX_ATTEMPTS = RETRY_SCHEDULE_MS.length + 1;
export const JITTER = 0.1;
/** A Retry-After never pushes a retry further than this. */
export const MAX_RETRY_AFTER_MS = 86_400_000;
/** An endpoint failing without a single success for this long is disabled. */
export const DISABLE_AFTER_FAILING_MS = 5 * 86_400_000;
export const DEFAULT_TIMEOUT_MS = 15_000;
/** Statuses whose Retry-After is honoured (rate limiting and overload). */
export const RETRY_AFTER_STATUSES: ReadonlySet<number> = new Set([429, 502, 503, 504]);

/**
 * The delay before the next attempt after `attempts` failed ones, or null to give up.
 * `retryAfterMs` (from the receiver) can lengthen the step, never shorten it; capped at 24 h.
 */
export function retryDelay(attempts: number, random: () => number, retryAfterMs: number | null = null): number | null {
  if (attempts < 1 || attempts > RETRY_SCHEDULE_MS.length) return null;
  const step = RETRY_SCHEDULE_MS[attempts - 1]!;
  const jittered = Math.round(step * (1 - JITTER + 2 * JITTER * random()));
  if (retryAfterMs === null) return jittered;
  return Math.min(Math.max(jittered, retryAfterMs), MAX_RETRY_AFTER_MS);
}

/** `Retry-After` as milliseconds from `now`: delta-seconds or an HTTP-date (RFC 9110 §10.2.3). */
export function parseRetryAfter(value: string | null, now: number): number | null {
  if (value === null) return null;
  const s = value.trim();
  if (/^\d+$/.test(s)) return Math.min(Number(s) * 1000, MAX_RETRY_AFTER_MS);
  const t = Date.parse(s);
  if (Number.isNaN(t)) return null;
  return Math.min(Math.max(0, t - now), MAX_RETRY_AFTER_MS);
}

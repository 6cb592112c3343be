/**
 * The one way the source adapters talk HTTP: a JSON GET with a per-request timeout, a Content-Type
 * check before parsing, one retry with jitter for transient failures, and error strings that never
 * carry an API key. It never throws for upstream trouble; it returns a typed failure.
 */

export type HttpFailureKind = 'http' | 'timeout' | 'parse' | 'network' | 'blocked';

export type SleepFn = (ms: number) => Promise<void>;

export interface FetchJsonOptions {
  /** Per-attempt timeout, covering headers and body. */
  timeoutMs: number;
  /** An outer signal (the scanner's); when it aborts, the request stops and is not retried. */
  signal?: AbortSignal;
  headers?: Record<string, string>;
  /** Statuses that mean "back off" (Waze 403, HERE 429/503…): never retried, reported as `blocked`. */
  blockStatuses?: readonly number[];
  /** How a 2xx answer with an HTML body is classified: `blocked` for a bot wall, else `parse`. */
  htmlKind?: 'parse' | 'blocked';
  /** Extra attempts after a retryable failure (timeout, network, 5xx not in blockStatuses). Default 1. */
  retries?: number;
  /** Waits between attempts; injectable so tests do not sleep. Default `Bun.sleep`. */
  sleep?: SleepFn;
  /** 0 ≤ x < 1, for the jitter. Default `Math.random`. */
  random?: () => number;
  /** The retry delay is `retryBaseMs × (1 + random())`. Default 500 ms. */
  retryBaseMs?: number;
  /** Clock for an HTTP-date `Retry-After`. Default `Date.now`. */
  now?: () => number;
  /** Literal secrets to scrub from error strings, on top of `key=`/`apiKey=` query values. */
  secrets?: readonly string[];
}

export interface FetchJsonSuccess {
  ok: true;
  status: number;
  headers: Headers;
  body: unknown;
  /** HTTP requests made, retries included. */
  requests: number;
}

export interface FetchJsonFailure {
  ok: false;
  kind: HttpFailureKind;
  /** One line, safe to log: API keys are redacted. */
  error: string;
  /** The last HTTP status, null when no answer arrived. */
  status: number | null;
  headers: Headers | null;
  /** `Retry-After` in ms from now, when the last answer carried one. */
  retryAfterMs: number | null;
  /** The start of the last error body (redacted, ≤ 200 chars), when there was one. */
  bodySnippet: string | null;
  requests: number;
}

export type FetchJsonResult = FetchJsonSuccess | FetchJsonFailure;

const SECRET_PARAM = /([?&;]|\b)(key|apikey|api_key|access_token|token|subscription-key)=([^&\s"'<>#]*)/gi;

/**
 * Scrub API keys from a string: values of `key=`, `apiKey=`, `api_key=`, `token=`… parameters,
 * and any literal secret given (at least 4 characters long).
 */
export function redact(value: string, secrets: readonly string[] = []): string {
  let out = value.replace(SECRET_PARAM, (_m, pre: string, name: string) => `${pre}${name}=REDACTED`);
  for (const s of secrets) {
    if (s.length >= 4) out = out.split(s).join('REDACTED');
    const enc = encodeURIComponent(s);
    if (enc !== s && enc.length >= 4) out = out.split(enc).join('REDACTED');
  }
  return out;
}

/** `Retry-After` as ms from `now`: delta-seconds or an HTTP-date; null when absent or invalid. */
export function parseRetryAfter(value: string | null, now: number): number | null {
  if (value === null) return null;
  const v = value.trim();
  if (/^\d+$/.test(v)) return Number(v) * 1000;
  const at = Date.parse(v);
  if (!Number.isFinite(at)) return null;
  return Math.max(0, at - now);
}

function isJsonContentType(ct: string): boolean {
  const mime = ct.split(';')[0]?.trim().toLowerCase() ?? '';
  return mime === 'application/json' || mime === 'text/json' || mime.endsWith('+json');
}

function looksLikeHtml(body: string): boolean {
  return /^\s*</.test(body);
}

function snippet(body: string, secrets: readonly string[]): string | null {
  // Only the head is looked at: an answer can be megabytes long. A secret cut in two by that limit
  // would escape `redact`, so a trailing prefix of any secret is dropped as well.
  let head = body.slice(0, 4000);
  if (head.length < body.length) {
    for (const s of secrets) {
      for (let k = Math.min(s.length - 1, head.length); k >= 1; k--) {
        if (head.endsWith(s.slice(0, k))) {
          head = head.slice(0, head.length - k);
          break;
        }
      }
    }
  }
  const one = redact(head, secrets).replace(/\s+/g, ' ').trim();
  if (one === '') return null;
  return one.slice(0, 200);
}

interface Attempt {
  result: FetchJsonResult;
  retryable: boolean;
}

const defaultSleep: SleepFn = (ms) => Bun.sleep(ms);

/** GET `url` and parse its JSON body. See {@link FetchJsonOptions} for the policy. */
export async function fetchJson(url: string | URL, options: FetchJsonOptions): Promise<FetchJsonResult> {
  const href = typeof url === 'string' ? url : url.href;
  const secrets = options.secrets ?? [];
  const safeUrl = redactUrlForLog(href, secrets);
  const attempts = 1 + Math.max(0, options.retries ?? 1);
  const sleep = options.sleep ?? defaultSleep;
  const random = options.random ?? Math.random;
  const base = options.retryBaseMs ?? 500;
  let requests = 0;
  let last: FetchJsonResult | null = null;

  for (let i = 0; i < attempts; i++) {
    if (i > 0) {
      await sleep(Math.round(base * (1 + random())));
    }
    if (options.signal?.aborted) {
      return last && !last.ok ? last : abortedFailure(safeUrl, requests);
    }
    requests++;
    const { result, retryable } = await attempt(href, safeUrl, options, secrets);
    last = { ...result, requests };
    if (result.ok || !retryable || options.signal?.aborted) return last;
  }
  // The loop always returns or sets `last` on its first pass.
  return last ?? abortedFailure(safeUrl, requests);
}

function abortedFailure(safeUrl: string, requests: number): FetchJsonFailure {
  return {
    ok: false,
    kind: 'timeout',
    error: `GET ${safeUrl}: aborted by the caller`,
    status: null,
    headers: null,
    retryAfterMs: null,
    bodySnippet: null,
    requests,
  };
}

/** A URL for error strings: query secrets redacted, long query strings shortened. */
function redactUrlForLog(href: string, secrets: readonly string[]): string {
  const r = redact(href, secrets);
  return r.length > 300 ? `${r.slice(0, 297)}...` : r;
}

async function attempt(
  href: string,
  safeUrl: string,
  options: FetchJsonOptions,
  secrets: readonly string[],
): Promise<Attempt> {
  const timeout = AbortSignal.timeout(options.timeoutMs);
  const signal = options.signal ? AbortSignal.any([timeout, options.signal]) : timeout;
  const fail = (
    kind: HttpFailureKind,
    error: string,
    retryable: boolean,
    extra: Partial<FetchJsonFailure> = {},
  ): Attempt => ({
    retryable,
    result: {
      ok: false,
      kind,
      error: redact(error, secrets),
      status: null,
      headers: null,
      retryAfterMs: null,
      bodySnippet: null,
      requests: 0,
      ...extra,
    },
  });
  const caught = (err: unknown): Attempt => {
    if (options.signal?.aborted && !timeout.aborted) {
      return fail('timeout', `GET ${safeUrl}: aborted by the caller`, false);
    }
    if (timeout.aborted || (err instanceof Error && err.name === 'TimeoutError')) {
      return fail('timeout', `GET ${safeUrl}: no answer within ${options.timeoutMs} ms`, true);
    }
    const code =
      err && typeof err === 'object' && 'code' in err && typeof err.code === 'string' ? err.code : null;
    const name = err instanceof Error ? err.name : 'Error';
    return fail('network', `GET ${safeUrl}: network error (${code ?? name})`, true);
  };

  let res: Response;
  try {
    res = await fetch(href, {
      method: 'GET',
      headers: { accept: 'application/json', ...options.headers },
      signal,
      redirect: 'follow',
    });
  } catch (err) {
    return caught(err);
  }

  let body: string;
  try {
    body = await res.text();
  } catch (err) {
    return caught(err);
  }

  const status = res.status;
  const headers = res.headers;
  const retryAfterMs = parseRetryAfter(headers.get('retry-after'), (options.now ?? Date.now)());
  // The snippet is only worked out for failures: a good answer can be megabytes long.
  const failureExtra = () => ({ status, headers, retryAfterMs, bodySnippet: snippet(body, secrets) });

  if (status < 200 || status > 299) {
    const extra = failureExtra();
    const detail = extra.bodySnippet ? `: ${extra.bodySnippet.slice(0, 120)}` : '';
    if (options.blockStatuses?.includes(status)) {
      return fail('blocked', `GET ${safeUrl}: HTTP ${status}${detail}`, false, extra);
    }
    return fail('http', `GET ${safeUrl}: HTTP ${status}${detail}`, status >= 500, extra);
  }

  const ct = headers.get('content-type') ?? '';
  if (/html/i.test(ct) || looksLikeHtml(body)) {
    return fail(
      options.htmlKind ?? 'parse',
      `GET ${safeUrl}: HTML answer (HTTP ${status}, ${ct || 'no Content-Type'}) instead of JSON`,
      false,
      failureExtra(),
    );
  }
  if (ct !== '' && !isJsonContentType(ct)) {
    return fail('parse', `GET ${safeUrl}: unexpected Content-Type "${ct}" (wanted JSON)`, false, failureExtra());
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    return fail(
      'parse',
      `GET ${safeUrl}: malformed or truncated JSON (HTTP ${status}, ${body.length} characters)`,
      false,
      failureExtra(),
    );
  }
  return { retryable: false, result: { ok: true, status, headers, body: parsed, requests: 0 } };
}

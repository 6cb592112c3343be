import { Elysia } from 'elysia';
import { iso } from '../../clock.ts';
import { ANONYMOUS, type Access } from '../../limits/access.ts';
import type { Limits } from '../../limits/index.ts';
import { QuotaEntry } from '../../limits/quota.ts';
import { ApiError, PROBLEMS, problemSlug } from '../problems.ts';
import { addProblemHeaders, baseUrlOf, pathOf } from './errors.ts';
import { requestIdOf } from './request-context.ts';

/**
 * The request's plan, for routes: `.use(accessContext)` and destructure `access` from the
 * context. The limits gate sets it before routing; without the gate (unit tests) every request
 * is anonymous Free. See `requireEnterprise`.
 */
export const accessContext = new Elysia({ name: 'trafik.access' }).decorate('access', ANONYMOUS as Access);

/** Throws 403 plan_required unless the request runs on an Enterprise key. */
export function requireEnterprise(access: Access, feature: string, detail: string): void {
  if (access.plan !== 'enterprise') throw new ApiError('plan_required', detail, { feature });
}

/** Query parameters refused on every route: keys never travel in URLs (they end up in logs). */
export const QUERY_KEY_NAMES: ReadonlySet<string> = new Set(['key', 'api_key', 'apikey', 'access_token', 'token']);

/** The first query parameter whose name is a key name (case-insensitive, percent-decoded), or null. */
export function queryKeyParam(url: string, q: number): string | null {
  let i = q + 1;
  const n = url.length;
  while (i < n) {
    let amp = url.indexOf('&', i);
    if (amp === -1) amp = n;
    let eq = url.indexOf('=', i);
    if (eq === -1 || eq > amp) eq = amp;
    // Every refused name starts with a, k or t (any case), or is percent-encoded.
    const c = url.charCodeAt(i) | 0x20;
    if (eq - i >= 3 && (c === 0x61 || c === 0x6b || c === 0x74 || c === 0x25 /* % */)) {
      let name = url.slice(i, eq);
      if (name.includes('%') || name.includes('+')) {
        try {
          name = decodeURIComponent(name.replaceAll('+', ' '));
        } catch {}
      }
      name = name.trim().toLowerCase();
      if (QUERY_KEY_NAMES.has(name)) return url.slice(i, eq);
    }
    i = amp + 1;
  }
  return null;
}

/** Requests the monthly quota counts (when answered 2xx): `/api/v1/events*` and `/api/v1/stats`. */
export function isQuotaPath(url: string): boolean {
  const s = url.indexOf('/', 8);
  if (s === -1 || !url.startsWith('/api/v1/', s)) return false;
  const r = s + 8;
  let end: number;
  if (url.startsWith('events', r)) end = r + 6;
  else if (url.startsWith('stats', r)) end = r + 5;
  else return false;
  if (end === url.length) return true;
  const c = url.charCodeAt(end);
  return c === 47 /* / */ || c === 63 /* ? */;
}

const BAD_SCHEME = '\u0000scheme';
const CONFLICT = '\u0000conflict';

/** The key a request presents (`Authorization: Bearer` or `X-API-Key`), null if none, or a sentinel. */
function presentedKey(headers: Headers): string | null {
  const auth = headers.get('authorization');
  const apiKey = headers.get('x-api-key');
  if (auth === null) return apiKey === null ? null : apiKey.trim();
  if (auth.length < 7 || auth.slice(0, 7).toLowerCase() !== 'bearer ') return BAD_SCHEME;
  const bearer = auth.slice(7).trim();
  if (apiKey !== null && apiKey.trim() !== bearer) return CONFLICT;
  return bearer;
}

const SMALL_NUMBERS: string[] = Array.from({ length: 1001 }, (_, i) => String(i));
function num(n: number): string {
  return n < SMALL_NUMBERS.length ? SMALL_NUMBERS[n]! : String(n);
}

type SetLike = { headers: Record<string, unknown> };

/** Headers only this gate writes: no route sets them, so they skip the (slow) `has` check. */
const GATE_HEADERS: ReadonlySet<string> = new Set([
  'x-ratelimit-limit',
  'x-ratelimit-remaining',
  'x-ratelimit-reset',
  'ratelimit-policy',
  'ratelimit',
  'x-quota-limit',
  'x-quota-remaining',
  'x-quota-reset',
]);

/**
 * Moves the headers collected in `set.headers` onto a handler's own Response, in place (the
 * response's own headers win, as in Elysia's merge — except the gate's own, which no route sets
 * and which skip `Headers.has`, ~200 ns each), then empties `set.headers`. Elysia would
 * otherwise rebuild every response — `new Response(response.body, merged headers)` — which turns
 * a prebuilt Blob body into a stream and costs a second Response and Headers copy per request.
 * Responses with immutable headers are left to Elysia's merge.
 */
export function moveSetHeaders(res: Response, set: SetLike): void {
  const from = set.headers;
  const to = res.headers;
  try {
    for (const k in from) {
      const v = from[k];
      if (v !== undefined && (GATE_HEADERS.has(k) || !to.has(k))) to.set(k, typeof v === 'string' ? v : String(v));
    }
  } catch {
    return;
  }
  set.headers = {};
}

/**
 * RFC 9457 bodies for the gate's own refusals, byte-for-byte what `problemBody` renders, built
 * from a cached prefix per problem and base URL plus the two per-request members.
 */
class ProblemTemplates {
  private readonly cache = new Map<ApiError, { base: string; head: string; tail: string; extras: string }>();
  private lastUrl = '';
  private lastBase = '';
  private lastInstance = '""';
  constructor(private readonly publicUrl: string) {}

  render(err: ApiError, url: string, requestId: string): string {
    if (url !== this.lastUrl) {
      this.lastUrl = url;
      this.lastBase = baseUrlOf(this.publicUrl, url);
      this.lastInstance = JSON.stringify(pathOf(url));
    }
    const base = this.lastBase;
    let t = this.cache.get(err);
    if (t === undefined || t.base !== base) {
      const head = JSON.stringify({ type: `${base}/problems/${problemSlug(err.code)}`, title: PROBLEMS[err.code].title, status: err.status, detail: err.detail });
      const extras = JSON.stringify(err.extras);
      t = { base, head: head.slice(0, -1), tail: `,"code":${JSON.stringify(err.code)},"request_id":`, extras: extras === '{}' ? '}' : `,${extras.slice(1)}` };
      if (this.cache.size >= 64) this.cache.clear();
      this.cache.set(err, t);
    }
    return `${t.head},"instance":${this.lastInstance}${t.tail}${jsonString(requestId)}${t.extras}`;
  }
}

/** JSON string literal; request ids are almost always plain ASCII that needs no escaping. */
function jsonString(s: string): string {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x20 || c > 0x7e || c === 0x22 || c === 0x5c) return JSON.stringify(s);
  }
  return `"${s}"`;
}

export interface LimitsGateOptions {
  publicUrl: string;
  /**
   * The socket address of a request. Defaults to the server's `requestIP`; under `app.handle`
   * (tests) there is no server, so tests inject one.
   */
  clientIp?: (request: Request) => string | null;
}

/**
 * The gate (AppDeps.gate), run for every request after the request id and before the method
 * guard and routing (CONTRACT §4):
 *  1. per-IP sliding window: headers on every response; over the limit → 429 (not counted);
 *  2. GET/HEAD only (other methods go on to the method guard's 405/204): a key in the query
 *     string → 400; a key in `Authorization: Bearer` / `X-API-Key` → its plan, or 401;
 *  3. Free: X-Quota-* headers; quota used up on /events* or /stats → 403 quota_exceeded.
 * After the handler, a 2xx from /events* or /stats counts one against the Free quota; 304s and
 * errors (which never reach afterHandle) do not. Per request this is Map lookups, arithmetic and
 * cached header strings; SQLite only on a subject's first sight or a key-cache miss.
 */
export function limitsGate(limits: Limits, opts: LimitsGateOptions) {
  const { rate, quota, keys, ip, clock } = limits;
  const publicUrl = opts.publicUrl;
  const clientIp = opts.clientIp ?? null;
  // Captured at start rather than read from the context: naming `server` in a hook makes Elysia
  // define a getter on every request's context.
  let server: { requestIP(request: Request): { address: string } | null } | null = null;

  const limitText = num(rate.limit);
  const policy = `"ip-minute";q=${rate.limit};w=${Math.round(rate.windowMs / 1000)}`;
  const quotaLimitText = num(quota.limit);
  let resetFor = -1;
  let resetText = '';
  let secondsFor = -1;
  let endFor = -1;
  let rateLimitTexts: string[] = [];
  let quotaResetFor = -1;
  let quotaResetText = '';

  const tooMany = new ApiError(
    'rate_limited',
    `More than ${rate.limit} requests in ${Math.round(rate.windowMs / 1000)} seconds from this address. Retry after ${Math.round(rate.windowMs / 1000)} seconds.`,
    {},
    { 'retry-after': '60' },
  );
  const unauthorized = { 'www-authenticate': 'Bearer' };
  const badKey = new ApiError('invalid_api_key', 'The API key is unknown, malformed or revoked.', {}, unauthorized);
  const badScheme = new ApiError('invalid_api_key', 'The Authorization header must be `Bearer <key>`; or send the key in X-API-Key.', {}, unauthorized);
  const conflict = new ApiError('invalid_api_key', 'Authorization and X-API-Key carry different keys; send one.', {}, unauthorized);
  const keyUnavailable = new ApiError('unavailable', 'API keys cannot be checked right now: the database does not answer. Retry later.', {}, { 'retry-after': '5' });

  const templates = new ProblemTemplates(publicUrl);
  /** A refusal from the gate: one Response with every header; Elysia passes it on untouched. */
  function refuse(err: ApiError, url: string, set: SetLike): Response {
    const headers = set.headers as Record<string, string>;
    const body = templates.render(err, url, requestIdOf(headers));
    addProblemHeaders(headers, err);
    set.headers = {};
    return new Response(body, { status: err.status, headers });
  }

  // Refusals for the rate limit are most of what a client hammering the API gets, and their
  // headers are the same for every refusal in the same second (nothing left, same reset, same
  // CORS): one Headers set per second is copied into each Response and only the request id is
  // added (~1 µs less per refusal than building the set each time).
  let tooManySecond = -1;
  let tooManyEnd = -1;
  let tooManyExposed = false;
  let tooManyHeaders: Headers | null = null;
  function refuseTooMany(url: string, set: SetLike, now: number): Response {
    const collected = set.headers;
    const id = requestIdOf(collected);
    const second = Math.floor(now / 1000);
    const exposed = 'access-control-expose-headers' in collected;
    if (tooManyHeaders === null || second !== tooManySecond || rate.windowEnd !== tooManyEnd || exposed !== tooManyExposed) {
      rateHeaders(collected, -1, now);
      const all = addProblemHeaders({ ...(collected as Record<string, string>) }, tooMany);
      delete all['x-request-id'];
      tooManyHeaders = new Headers(all);
      tooManySecond = second;
      tooManyEnd = rate.windowEnd;
      tooManyExposed = exposed;
    }
    set.headers = {};
    const res = new Response(templates.render(tooMany, url, id), { status: tooMany.status, headers: tooManyHeaders });
    res.headers.set('x-request-id', id);
    return res;
  }

  function queryKeyRefused(name: string): ApiError {
    const reason = 'API keys are not accepted in the query string (URLs end up in logs); send it in `Authorization: Bearer <key>` or `X-API-Key`';
    return new ApiError('invalid_parameter', `${reason}.`, { invalid_params: [{ name: name.slice(0, 40), reason }] });
  }

  let exceeded: { end: number; err: ApiError } | null = null;
  function quotaExceeded(end: number): ApiError {
    if (exceeded?.end === end) return exceeded.err;
    const err = new ApiError(
      'quota_exceeded',
      `The Free plan's ${quota.limit} requests for this month are used up. The quota renews when the next month starts in Europe/Istanbul: ${iso(end)}. Enterprise has no monthly quota.`,
    );
    exceeded = { end, err };
    return err;
  }

  function rateHeaders(headers: Record<string, unknown>, left: number, now: number): void {
    const end = rate.windowEnd;
    if (end !== resetFor) {
      resetFor = end;
      resetText = String(Math.ceil(end / 1000));
    }
    const seconds = Math.max(1, Math.ceil((end - now) / 1000));
    if (seconds !== secondsFor || end !== endFor) {
      secondsFor = seconds;
      endFor = end;
      rateLimitTexts = [];
    }
    const r = left < 0 ? 0 : left;
    headers['x-ratelimit-limit'] = limitText;
    headers['x-ratelimit-remaining'] = num(r);
    headers['x-ratelimit-reset'] = resetText;
    headers['ratelimit-policy'] = policy;
    headers['ratelimit'] = rateLimitTexts[r] ??= `"ip-minute";r=${r};t=${seconds}`;
  }

  /** The gate's verdict on one request: its refusal, its plan, or undefined (not a GET/HEAD). */
  function admit(request: Request, set: SetLike): Access | Response | undefined {
    const headers = set.headers as Record<string, unknown>;
    const now = clock();
    const peer = clientIp === null ? (server?.requestIP(request)?.address ?? null) : clientIp(request);
    const bucket = ip.resolve(peer, request.headers);

    const left = rate.hit(bucket, now);
    if (left < 0) return refuseTooMany(request.url, set, now);
    rateHeaders(headers, left, now);

    const method = request.method;
    if (method !== 'GET' && method !== 'HEAD') return;
    const url = request.url;
    const q = url.indexOf('?');
    if (q !== -1) {
      const name = queryKeyParam(url, q);
      if (name !== null) return refuse(queryKeyRefused(name), url, set);
    }

    const presented = presentedKey(request.headers);
    let entry: QuotaEntry;
    if (presented === null) entry = quota.entry(bucket, null, now);
    else {
      if (presented === BAD_SCHEME || presented === CONFLICT) {
        return refuse(presented === BAD_SCHEME ? badScheme : conflict, url, set);
      }
      let key;
      try {
        key = keys.resolve(presented, now);
      } catch {
        return refuse(keyUnavailable, url, set);
      }
      if (key === null) return refuse(badKey, url, set);
      keys.markUsed(key.id, now);
      if (key.plan !== 'free') return key;
      entry = quota.entry(key.id, key.id, now);
    }
    const periodEnd = quota.period(now).end;
    if (periodEnd !== quotaResetFor) {
      quotaResetFor = periodEnd;
      quotaResetText = String(Math.floor(periodEnd / 1000));
    }
    headers['x-quota-limit'] = quotaLimitText;
    headers['x-quota-remaining'] = num(quota.remaining(entry));
    headers['x-quota-reset'] = quotaResetText;
    if (quota.exhausted(entry) && isQuotaPath(url)) return refuse(quotaExceeded(periodEnd), url, set);
    return entry;
  }

  return new Elysia({ name: 'trafik.limits' })
    .use(accessContext)
    .onStart(function limitsServer(app) {
      server = app.server;
    })
    .onRequest(function limitsGateHook(ctx) {
      // Shaped so Elysia sees a synchronous hook (test/http/sync-path.test.ts).
      const verdict = admit(ctx.request, ctx.set);
      if (verdict instanceof Response) return verdict;
      if (verdict !== undefined) ctx.access = verdict;
    })
    .onAfterHandle({ as: 'global' }, function limitsCountHook(ctx) {
      const res = ctx.responseValue;
      const set = ctx.set;
      const entry = ctx.access;
      if (entry instanceof QuotaEntry) {
        const status = res instanceof Response ? res.status : typeof set.status === 'number' ? set.status : 200;
        if (status >= 200 && status <= 299 && isQuotaPath(ctx.request.url)) {
          quota.add(entry);
          set.headers['x-quota-remaining'] = num(quota.remaining(entry));
        }
      }
      if (res instanceof Response && set.status === 200) moveSetHeaders(res, set as SetLike);
    });
}

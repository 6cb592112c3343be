/**
 * The closed set of problem codes (CONTRACT §3), one status table, and the human pages that each
 * problem `type` URL names. Framework-free: the error plugin renders these as RFC 9457 bodies.
 */
export const PROBLEMS = {
  unknown_city: { title: 'Unknown city', status: 404, about: "The city is not one of Turkey's 81 provinces. Any spelling is accepted — Turkish or ASCII letters in any case, percent-encoded, short or historic names (Antep, Urfa, İzmit…) and plate codes (34, 06) — but an unknown name is never auto-corrected. The response lists the nearest provinces in `suggestions`. A path segment answers 404, the `city` query parameter 400." },
  invalid_parameter: { title: 'Invalid parameter', status: 400, about: 'A query parameter has a value the endpoint does not accept. `invalid_params` lists each offending parameter with the reason; nothing was defaulted or clamped.' },
  unknown_parameter: { title: 'Unknown parameter', status: 400, about: 'The request named a query parameter the endpoint does not know (or gave one twice). Misspelled filters are refused instead of being silently ignored, so a typo never returns unfiltered data.' },
  invalid_api_key: { title: 'Invalid API key', status: 401, about: 'The API key is unknown, malformed or revoked. Send keys in `Authorization: Bearer <key>` or `X-API-Key`; keys in the query string are refused because URLs end up in logs.' },
  plan_required: { title: 'Plan required', status: 403, about: 'The feature (history, the live stream, webhooks) belongs to the Enterprise plan.' },
  quota_exceeded: { title: 'Monthly quota exceeded', status: 403, about: "The Free plan's monthly quota is used up. It renews at the start of the next calendar month (Europe/Istanbul), given in `X-Quota-Reset`." },
  not_found: { title: 'Not found', status: 404, about: 'No resource lives at this path. The API is under /api/v1; its documentation is at /swagger.' },
  method_not_allowed: { title: 'Method not allowed', status: 405, about: 'The API is read-only: every route answers GET, HEAD and OPTIONS, listed in the `Allow` header.' },
  rate_limited: { title: 'Too many requests', status: 429, about: 'More than the per-IP limit of requests in 60 seconds. Wait the `Retry-After` seconds; the `RateLimit` and `X-RateLimit-*` headers on every response show what is left.' },
  unavailable: { title: 'Service unavailable', status: 503, about: 'The database cannot be reached right now. Retry later.' },
  internal_error: { title: 'Internal error', status: 500, about: 'An unexpected failure on our side. It has been logged with the request id.' },
} as const satisfies Record<string, { title: string; status: number; about: string }>;

export type ProblemCode = keyof typeof PROBLEMS;

export interface InvalidParam {
  name: string;
  reason: string;
}

export interface CitySuggestion {
  slug: string;
  name: string;
  url: string;
}

export interface ProblemExtras {
  invalid_params?: InvalidParam[];
  suggestions?: CitySuggestion[];
  feature?: string;
}

/** A denial the API answers on purpose. Anything else thrown is a bug and becomes a bare 500. */
export class ApiError extends Error {
  readonly status: number;
  constructor(
    readonly code: ProblemCode,
    readonly detail: string,
    readonly extras: ProblemExtras = {},
    readonly headers: Record<string, string> = {},
    status?: number,
  ) {
    super(detail);
    this.name = 'ApiError';
    this.status = status ?? PROBLEMS[code].status;
  }
}

export function invalidParams(params: InvalidParam[]): ApiError {
  const detail =
    params.length === 1 ? `Invalid value for '${params[0]!.name}': ${params[0]!.reason}.` : `${params.length} query parameters have invalid values.`;
  return new ApiError('invalid_parameter', detail, { invalid_params: params });
}

export function problemSlug(code: ProblemCode): string {
  return code.replaceAll('_', '-');
}

export function problemBySlug(slug: string): ProblemCode | undefined {
  const code = slug.replaceAll('-', '_');
  return Object.hasOwn(PROBLEMS, code) ? (code as ProblemCode) : undefined;
}

export interface ProblemBody extends ProblemExtras {
  type: string;
  title: string;
  status: number;
  detail: string;
  instance: string;
  code: ProblemCode;
  request_id: string;
}

export function problemBody(err: ApiError, baseUrl: string, instance: string, requestId: string): ProblemBody {
  return {
    type: `${baseUrl}/problems/${problemSlug(err.code)}`,
    title: PROBLEMS[err.code].title,
    status: err.status,
    detail: err.detail,
    instance,
    code: err.code,
    request_id: requestId,
    ...err.extras,
  };
}

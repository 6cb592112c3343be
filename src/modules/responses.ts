import { Problem } from './shared-model.ts';

const DESCRIPTIONS: Record<number, string> = {
  400: 'Bad request: unknown or invalid query parameter, unknown city in the query (problem+json)',
  401: 'Invalid, revoked or malformed API key (problem+json)',
  403: 'Plan required, or the monthly quota is used up (problem+json)',
  404: 'Unknown city (with suggestions) or unknown route (problem+json)',
  405: 'Method not allowed: the API is read-only (problem+json)',
  429: 'Per-IP rate limit exceeded; Retry-After: 60 (problem+json)',
  503: 'Database unavailable (problem+json)',
};

/** The shared problem+json responses a route can answer, keyed by status, for `response: {…}`. */
export function errorResponses(...statuses: number[]): Record<number, typeof Problem> {
  const all = [...new Set([...statuses, 401, 405, 429])];
  return Object.fromEntries(all.map((s) => [s, { ...Problem, description: DESCRIPTIONS[s] ?? 'Problem' }])) as Record<number, typeof Problem>;
}

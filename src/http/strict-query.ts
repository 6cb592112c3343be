import type { Static, TSchema } from 'elysia';
import { ApiError, invalidParams, type InvalidParam } from './problems.ts';

/**
 * The query parameters of a route, parsed from the raw query string against the route's own `t`
 * schema — the one parser and validator of query strings (the routes give Elysia no `query:`
 * schema; the OpenAPI document gets it from `parameterDocs`). Elysia's coercing validator
 * would drop unknown parameters, take the last of repeated ones, accept `1e2` or `+5` as
 * integers and lose the field name on range errors; a traffic API must instead refuse a typo'd
 * filter rather than answer unfiltered data (CONTRACT §3). Integers and numbers come back as
 * numbers, everything else as the string sent; defaults are the services' business.
 */
export function strictQuery<S extends TSchema & { properties: object }>(schema: S): (url: string) => Static<S> {
  const props = schema.properties as Record<string, SchemaLike>;
  const names = new Set(Object.keys(props));
  // The parsed object is typed by the schema: a kind this checker cannot check and convert (a
  // boolean, an array…) would arrive as the raw string, so it is refused when the route is built.
  for (const n of names) {
    if (kindOf(props[n]!) === null) throw new Error(`strictQuery: query parameter '${n}' has a type it cannot check`);
  }
  const numeric = new Set([...names].filter((n) => kindOf(props[n]!) === 'integer' || kindOf(props[n]!) === 'number'));
  const required = ((schema as { required?: string[] }).required ?? []).filter((n) => names.has(n));
  const none = required.length === 0 ? (Object.freeze({}) as Static<S>) : null;
  // What a query string means depends on nothing but the string: the hot ones (the same page
  // asked for again and again) skip the parse. Bounded, cleared when full.
  const known = new Map<string, Static<S>>();
  return function parseQuery(url: string): Static<S> {
    const q = url.indexOf('?');
    const raw = q === -1 ? '' : url.slice(q + 1);
    if (raw === '' && none !== null) return none;
    const hit = known.get(raw);
    if (hit !== undefined) return hit;
    const parsed = Object.freeze(parse(raw)) as Static<S>;
    if (raw.length <= 512) {
      if (known.size >= 4096) known.clear();
      known.set(raw, parsed);
    }
    return parsed;
  };
  function parse(raw: string): Record<string, string | number> {
    const params = new URLSearchParams(raw);
    const out: Record<string, string | number> = {};
    const seen = new Set<string>();
    const unknown: string[] = [];
    const bad: InvalidParam[] = [];
    for (const [name, value] of params) {
      if (!names.has(name)) {
        if (!unknown.includes(name)) unknown.push(name);
        continue;
      }
      if (seen.has(name)) {
        bad.push({ name, reason: REPEATED });
        continue;
      }
      seen.add(name);
      const reason = checkValue(props[name]!, value);
      if (reason !== null) bad.push({ name, reason });
      else out[name] = numeric.has(name) ? Number(value) : value;
    }
    if (unknown.length > 0) {
      const list = unknown.map((n) => `'${n.slice(0, 40)}'`).join(', ');
      throw new ApiError('unknown_parameter', `Unknown query parameter${unknown.length > 1 ? 's' : ''} ${list}. Known: ${[...names].join(', ')}.`, {
        invalid_params: unknown.map((n) => ({ name: n.slice(0, 40), reason: 'not a parameter of this endpoint' })),
      });
    }
    for (const n of required) if (!seen.has(n)) bad.push({ name: n, reason: 'is required' });
    if (bad.length > 0) throw invalidParams(bad);
    return out;
  }
}

const REPEATED = 'given more than once; send it once (lists are comma-separated)';

/** What checkValue checks a parameter as; null for a schema it cannot check. */
function kindOf(s: SchemaLike): 'literals' | 'integer' | 'number' | 'string' | null {
  if (s.anyOf?.every((a) => a.const !== undefined) || s.enum !== undefined) return 'literals';
  if (s.type === 'integer' || s.anyOf?.some((a) => a.type === 'integer')) return 'integer';
  if (s.type === 'number') return 'number';
  if (s.type === 'string') return 'string';
  return null;
}

interface SchemaLike {
  type?: string;
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number;
  pattern?: string;
  minLength?: number;
  maxLength?: number;
  enum?: unknown[];
  anyOf?: SchemaLike[];
  const?: unknown;
  'x-reason'?: string;
}

const patternCache = new Map<string, RegExp>();

function checkValue(s: SchemaLike, raw: string): string | null {
  if (raw === '') return 'must not be empty';
  const literals = s.anyOf?.every((a) => a.const !== undefined) ? s.anyOf.map((a) => String(a.const)) : (s.enum?.map(String) ?? null);
  if (literals !== null) return literals.includes(raw) ? null : `must be one of ${literals.join(', ')}`;
  // Elysia's `t.Integer` is a coercing union (anyOf string|integer, bounds on the outer schema):
  // without this it fell through unchecked and Elysia's own validator answered with the parameter
  // named 'request' (limit=0) or accepted 1e2 and +5.
  if (s.type === 'integer' || s.anyOf?.some((a) => a.type === 'integer')) {
    if (!/^\d{1,12}$/.test(raw)) return intReason(s);
    const n = Number(raw);
    if ((s.minimum !== undefined && n < s.minimum) || (s.maximum !== undefined && n > s.maximum)) return intReason(s);
    return null;
  }
  if (s.type === 'number') {
    if (!/^(\d{1,9}(\.\d{1,9})?|\.\d{1,9})$/.test(raw)) return numReason(s);
    const n = Number(raw);
    if (s.exclusiveMinimum !== undefined && n <= s.exclusiveMinimum) return numReason(s);
    if ((s.minimum !== undefined && n < s.minimum) || (s.maximum !== undefined && n > s.maximum)) return numReason(s);
    return null;
  }
  if (s.type === 'string') {
    if (s.maxLength !== undefined && raw.length > s.maxLength) return `must be at most ${s.maxLength} characters`;
    if (s.minLength !== undefined && raw.length < s.minLength) return `must be at least ${s.minLength} characters`;
    if (s.pattern !== undefined) {
      let re = patternCache.get(s.pattern);
      if (re === undefined) patternCache.set(s.pattern, (re = new RegExp(s.pattern)));
      if (!re.test(raw)) return s['x-reason'] ?? `must match ${s.pattern}`;
    }
    return null;
  }
  return null;
}

function intReason(s: SchemaLike): string {
  if (s.minimum !== undefined && s.maximum !== undefined) return `must be a whole number from ${s.minimum} to ${s.maximum}`;
  return 'must be a whole number';
}

function numReason(s: SchemaLike): string {
  const low = s.exclusiveMinimum !== undefined ? `more than ${s.exclusiveMinimum}` : s.minimum !== undefined ? `at least ${s.minimum}` : null;
  const high = s.maximum !== undefined ? `at most ${s.maximum}` : null;
  return `must be a number${low ? `, ${low}` : ''}${high ? `${low ? ' and' : ','} ${high}` : ''}`;
}

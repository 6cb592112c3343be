/**
 * Finishes the document @elysiajs/openapi generates from the routes' `t` schemas, where the
 * generator cannot express what the API does: problem bodies are `application/problem+json`,
 * list pages also come as `application/geo+json`, conditional requests answer 304, every
 * response carries the rate-limit and request-id headers, and Elysia's coercing integers
 * (string|integer unions) are shown as the plain integers clients send.
 */
import { PARAMETERS } from '../parameters.ts';

type Json = Record<string, unknown>;

const isObj = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

const COMMON_HEADERS = {
  'X-Request-Id': { description: 'Echo of a sane X-Request-Id from the client, else a new id; also in problem bodies', schema: { type: 'string' } },
  'X-RateLimit-Limit': { description: 'Requests allowed per 60 s window for the client IP', schema: { type: 'integer' } },
  'X-RateLimit-Remaining': { description: 'Requests left in the current window', schema: { type: 'integer' } },
  'X-RateLimit-Reset': { description: 'Epoch seconds when the current window ends', schema: { type: 'integer' } },
  RateLimit: { description: 'IETF draft: "ip-minute";r=<remaining>;t=<seconds>', schema: { type: 'string' } },
  'RateLimit-Policy': { description: 'IETF draft: "ip-minute";q=60;w=60', schema: { type: 'string' } },
};
const QUOTA_HEADERS = {
  'X-Quota-Limit': { description: 'Free plan: requests per calendar month (Europe/Istanbul)', schema: { type: 'integer' } },
  'X-Quota-Remaining': { description: 'Free plan: requests left this month', schema: { type: 'integer' } },
  'X-Quota-Reset': { description: 'Free plan: epoch seconds of the next month start (Europe/Istanbul)', schema: { type: 'integer' } },
};
const CACHE_HEADERS = {
  ETag: { description: 'Strong validator of the body; send it back in If-None-Match', schema: { type: 'string' } },
  'Last-Modified': { description: 'End of the last successful scan', schema: { type: 'string' } },
  'Cache-Control': { description: 'private, max-age=30', schema: { type: 'string' } },
};

function headerRefs(names: string[]): Json {
  return Object.fromEntries(names.map((n) => [n, { $ref: `#/components/headers/${n}` }]));
}

/** Coercing `t.Integer` query params come out as anyOf[string-integer, integer]: flatten them. */
function cleanParamSchema(schema: Json): Json {
  const { anyOf, 'x-reason': _reason, ...rest } = schema;
  if (Array.isArray(anyOf) && anyOf.some((a) => isObj(a) && a.type === 'integer')) return { ...rest, type: 'integer' };
  if (Array.isArray(anyOf) && anyOf.some((a) => isObj(a) && a.type === 'number')) return { ...rest, type: 'number' };
  return rest;
}

export function polishSpec(doc: Json, extraSchemas: Record<string, Json>): Json {
  const components = (isObj(doc.components) ? doc.components : {}) as Json;
  const schemas = (isObj(components.schemas) ? components.schemas : {}) as Json;
  Object.assign(schemas, extraSchemas);
  components.schemas = schemas;
  components.headers = { ...COMMON_HEADERS, ...QUOTA_HEADERS, ...CACHE_HEADERS };
  doc.components = components;

  const paths = isObj(doc.paths) ? doc.paths : {};
  for (const [path, item] of Object.entries(paths)) {
    if (!isObj(item) || !isObj(item.get)) continue;
    const op = item.get;
    if (Array.isArray(op[PARAMETERS])) {
      op.parameters = op[PARAMETERS];
      delete op[PARAMETERS];
    }
    if (Array.isArray(op.parameters)) {
      for (const p of op.parameters) if (isObj(p) && isObj(p.schema)) p.schema = cleanParamSchema(p.schema);
    }
    const responses = isObj(op.responses) ? op.responses : {};
    const data = path !== '/api/v1/health' && path !== '/api/v1/webhooks';
    for (const [status, res] of Object.entries(responses)) {
      if (!isObj(res)) continue;
      const content = isObj(res.content) ? res.content : {};
      const json = isObj(content['application/json']) ? content['application/json'] : undefined;
      const schema = json && isObj(json.schema) ? json.schema : undefined;
      if (schema?.title === 'Problem') {
        res.content = { 'application/problem+json': { schema: { $ref: '#/components/schemas/Problem' } } };
      } else if (schema?.title === 'EventList') {
        res.description = 'A page of events';
        res.content = {
          'application/json': { schema: { $ref: '#/components/schemas/EventList' } },
          'application/geo+json': { schema: { $ref: '#/components/schemas/EventFeatureCollection' } },
        };
      } else if (schema?.title === 'Stats' || schema?.title === 'Health' || schema?.title === 'WebhookList') {
        res.content = { 'application/json': { schema: { $ref: `#/components/schemas/${schema.title}` } } };
        if (res.description === `Response for status ${status}`) res.description = { Stats: 'Statistics', Health: 'Health report', WebhookList: 'Subscriptions of the calling key' }[schema.title as string] ?? res.description;
      }
      const names = Object.keys(COMMON_HEADERS);
      if (status.startsWith('2') && data) names.push(...Object.keys(QUOTA_HEADERS), ...Object.keys(CACHE_HEADERS));
      if (status === '429') (res as Json).headers = { ...headerRefs(names), 'Retry-After': { description: 'Always 60', schema: { type: 'integer', const: 60 } } };
      else res.headers = headerRefs(names);
    }
    if (path === '/api/v1/events/stream') {
      responses['200'] = {
        description: 'A Server-Sent Events stream: `id: <seq>`, `event: traffic_event.created|updated|cleared`, `data: <Event JSON>`; `: ping` every 15 s',
        content: { 'text/event-stream': { schema: { type: 'string' }, example: 'id: 1042\nevent: traffic_event.created\ndata: {"id":"evt_…","type":"accident",…}\n\n' } },
        headers: headerRefs(Object.keys(COMMON_HEADERS)),
      };
    } else if (data) {
      responses['304'] = { description: 'Not modified: If-None-Match matched the ETag', headers: headerRefs([...Object.keys(COMMON_HEADERS), ...Object.keys(CACHE_HEADERS)]) };
    }
    op.responses = Object.fromEntries(Object.entries(responses).sort(([a], [b]) => a.localeCompare(b)));
  }
  return doc;
}

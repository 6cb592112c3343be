import type { TSchema } from 'elysia';

type ObjectSchema = TSchema & { properties: Record<string, TSchema>; required?: string[] };

export interface ParameterDoc {
  name: string;
  in: 'path' | 'query';
  required: boolean;
  schema: Record<string, unknown>;
}

/**
 * The `detail` key that carries a route's parameters into the OpenAPI document. Not
 * `parameters`: @elysiajs/openapi replaces that with what it derives from the route (a bare
 * string for `:city`); `polishSpec` moves these into place.
 */
export const PARAMETERS = 'x-trafik-parameters';

/**
 * A route's parameters for the OpenAPI document (`detail[PARAMETERS]`), from the same `t` schemas its
 * handler parses with (`strictQuery`). The list routes give Elysia no `query:`/`params:` schema:
 * `strictQuery` is the one validator, and Elysia's coercing decode of the same schema cost
 * ~2.5 µs a request on the hottest route. Same shape as @elysiajs/openapi's own: path
 * parameters first and always required, then the query's in schema order.
 */
export function parameterDocs(schemas: { path?: ObjectSchema; query?: ObjectSchema }): ParameterDoc[] {
  const out: ParameterDoc[] = [];
  for (const where of ['path', 'query'] as const) {
    const s = schemas[where];
    if (s === undefined) continue;
    for (const [name, schema] of Object.entries(s.properties)) {
      out.push({ name, in: where, required: where === 'path' || (s.required ?? []).includes(name), schema: schema as Record<string, unknown> });
    }
  }
  return out;
}

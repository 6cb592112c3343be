import { t } from 'elysia';
import { EVENT_TYPES, SEVERITIES } from '../domain/event.ts';
import { PROBLEMS } from '../http/problems.ts';

/**
 * `t` models shared by several routes. Response integers use `t.Number({ multipleOf: 1 })`:
 * Elysia's `t.Integer` is a coercing union and would show up in the document as string|integer.
 */
export const Int = (opts: Record<string, unknown> = {}) => t.Number({ multipleOf: 1, ...opts });
export const Timestamp = (description: string) => t.String({ format: 'date-time', description, examples: ['2026-11-21T10:00:00Z'] });

export const CityRef = t.Object(
  {
    slug: t.String({ description: 'ASCII key, usable in /api/v1/events/{city}', examples: ['istanbul'] }),
    name: t.String({ description: 'Official Turkish name', examples: ['İstanbul'] }),
    plate: Int({ minimum: 1, maximum: 81, description: 'Licence-plate code of the province', examples: [34] }),
  },
  { $id: '#/components/schemas/CityRef', title: 'CityRef' },
);

export const TypeCounts = t.Object(
  Object.fromEntries(EVENT_TYPES.map((k) => [k, Int({ minimum: 0 })])) as Record<(typeof EVENT_TYPES)[number], ReturnType<typeof Int>>,
  { description: 'Counts per event type; all four keys always present.' },
);

export const SeverityCounts = t.Object(
  Object.fromEntries(SEVERITIES.map((k) => [k, Int({ minimum: 0 })])) as Record<(typeof SEVERITIES)[number], ReturnType<typeof Int>>,
  { description: 'Counts per severity; all four keys always present.' },
);

export const Problem = t.Object(
  {
    type: t.String({ format: 'uri', description: 'Absolute URL of a page explaining the problem', examples: ['https://trafik.example/problems/unknown-city'] }),
    title: t.String({ examples: ['Unknown city'] }),
    status: Int({ examples: [404] }),
    detail: t.String({ examples: ["'istambul' is not one of Turkey's 81 provinces."] }),
    instance: t.String({ description: 'The request path', examples: ['/api/v1/events/istambul'] }),
    code: t.UnionEnum(Object.keys(PROBLEMS) as [keyof typeof PROBLEMS, ...(keyof typeof PROBLEMS)[]], { description: 'Stable machine-readable code' }),
    request_id: t.String({ description: 'Same as the X-Request-Id response header' }),
    invalid_params: t.Optional(t.Array(t.Object({ name: t.String(), reason: t.String() }), { description: 'For invalid_parameter / unknown_parameter' })),
    suggestions: t.Optional(
      t.Array(t.Object({ slug: t.String(), name: t.String(), url: t.String() }), { description: 'For unknown_city: the nearest province names' }),
    ),
    feature: t.Optional(t.String({ description: 'For plan_required: the Enterprise feature asked for' })),
  },
  { title: 'Problem', description: 'RFC 9457 problem details (application/problem+json).' },
);

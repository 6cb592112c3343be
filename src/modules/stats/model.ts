import { t } from 'elysia';
import { RFC3339, RFC3339_REASON } from '../events/model.ts';
import { CityRef, Int, SeverityCounts, Timestamp, TypeCounts } from '../shared-model.ts';

export const StatsQuery = t.Object({
  top: t.Optional(t.Integer({ minimum: 1, maximum: 81, default: 10, description: 'How many of the busiest provinces to list (1–81)' })),
  from: t.Optional(t.String({ pattern: RFC3339, 'x-reason': RFC3339_REASON, description: 'Enterprise (history): count events seen at or after this time; default 24 hours ago' })),
  to: t.Optional(t.String({ pattern: RFC3339, 'x-reason': RFC3339_REASON, description: 'Enterprise (history): count events first seen at or before this time; default now' })),
});

export const Stats = t.Object(
  {
    generated_at: Timestamp('When this view of the data was built'),
    data_updated_at: t.Union([Timestamp('End of the last successful scan'), t.Null()]),
    window_hours: Int({ examples: [24] }),
    total: Int({ minimum: 0, description: 'Active events in the window' }),
    by_type: TypeCounts,
    by_severity: SeverityCounts,
    top_cities: t.Array(t.Object({ city: CityRef, count: Int({ minimum: 0 }), by_type: TypeCounts }), { description: 'Busiest provinces first' }),
    last_24h: t.Object({ created: Int({ minimum: 0 }), cleared: Int({ minimum: 0 }) }, { description: 'Events first seen / cleared in the last 24 hours' }),
    range: t.Optional(
      t.Object(
        { from: Timestamp('Start of the range'), to: Timestamp('End of the range'), created: Int({ minimum: 0 }), cleared: Int({ minimum: 0 }) },
        { description: 'With from/to (Enterprise): the range the counts cover — events seen during it — and how many began / were cleared in it' },
      ),
    ),
  },
  { title: 'Stats' },
);

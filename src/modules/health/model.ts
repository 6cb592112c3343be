import { t } from 'elysia';
import { Int, Timestamp } from '../shared-model.ts';

const Status = t.UnionEnum(['pass', 'warn', 'fail']);
const MaybeTime = (d: string) => t.Union([Timestamp(d), t.Null()]);

export const Health = t.Object(
  {
    status: Status,
    version: t.Literal('1.0', { description: 'API version' }),
    release: t.String({ description: 'Package version of the running build', examples: ['1.0.0'] }),
    uptime_seconds: Int({ minimum: 0 }),
    time: Timestamp('Server time'),
    checks: t.Object({
      database: t.Object({ status: Status, latency_ms: t.Union([t.Number(), t.Null()]), error: t.Optional(t.String()) }),
      scanner: t.Object({
        status: Status,
        sources: t.Array(t.String(), { examples: [['waze']] }),
        last_scan_started_at: MaybeTime('Start of the latest scan'),
        last_success_at: MaybeTime('End of the latest successful scan'),
        age_seconds: t.Union([Int({ minimum: 0 }), t.Null()]),
        duration_ms: t.Union([Int({ minimum: 0 }), t.Null()]),
        cells_total: Int({ minimum: 0 }),
        cells_ok: Int({ minimum: 0 }),
        cells_failed: Int({ minimum: 0 }),
        next_scan_at: MaybeTime('When the next scan is due'),
        backing_off: t.Array(t.Object({ source: t.String(), until: MaybeTime('End of the back-off'), reason: t.Union([t.String(), t.Null()]) }), {
          description: 'Sources that told us to back off (e.g. Waze 403)',
        }),
        reasons: t.Array(t.String(), { description: 'Why the status is not pass' }),
      }),
    }),
    events: t.Object({ active: Int({ minimum: 0 }) }),
  },
  { title: 'Health' },
);

import { and, desc, eq, gte, inArray, isNotNull, or } from 'drizzle-orm';
import type { Db } from '../db/client.ts';
import { events, scanRuns } from '../db/schema/index.ts';
import type { LoadWindow } from './read-model.ts';

/** The read model's one query: what the 24-hour window holds, and when data last changed. */
export function sqliteWindowLoader(db: Db): LoadWindow {
  return (since) => {
    const rows = db
      .select()
      .from(events)
      .where(
        or(
          and(eq(events.status, 'active'), gte(events.lastSeenAt, since)),
          and(eq(events.status, 'cleared'), isNotNull(events.clearedAt), gte(events.clearedAt, since)),
        ),
      )
      .all();
    const last = db
      .select({ finishedAt: scanRuns.finishedAt })
      .from(scanRuns)
      .where(and(inArray(scanRuns.status, ['ok', 'partial']), isNotNull(scanRuns.finishedAt)))
      .orderBy(desc(scanRuns.finishedAt))
      .limit(1)
      .get();
    return { rows, dataUpdatedAt: last?.finishedAt ?? null };
  };
}

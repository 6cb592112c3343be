import type { Database } from 'bun:sqlite';
import { yieldToLoop } from './pool.ts';

const DAY_MS = 24 * 60 * 60 * 1000;
const BATCH = 1000;

export interface PurgeResult {
  events: number;
  changes: number;
  scans: number;
}

/**
 * Deletes what is older than HISTORY_DAYS: events last seen (or cleared) before the cutoff, outbox
 * rows and scan records started before it. In small batches so no delete holds the lock long.
 */
export async function purgeOld(writer: Database, now: number, historyDays: number, pause: () => Promise<void> = yieldToLoop): Promise<PurgeResult> {
  const cutoff = now - historyDays * DAY_MS;
  const batches: [keyof PurgeResult, string][] = [
    ['events', `DELETE FROM events WHERE rowid IN (SELECT rowid FROM events WHERE last_seen_at < ?1 AND (cleared_at IS NULL OR cleared_at < ?1) LIMIT ${BATCH})`],
    ['changes', `DELETE FROM event_changes WHERE seq IN (SELECT seq FROM event_changes WHERE at < ?1 LIMIT ${BATCH})`],
    ['scans', `DELETE FROM scan_runs WHERE id IN (SELECT id FROM scan_runs WHERE started_at < ?1 AND status != 'running' LIMIT ${BATCH})`],
  ];
  const result: PurgeResult = { events: 0, changes: 0, scans: 0 };
  for (const [key, sql] of batches) {
    const stmt = writer.prepare(sql);
    for (;;) {
      const n = stmt.run(cutoff).changes;
      result[key] += n;
      if (n < BATCH) break;
      await pause();
    }
  }
  return result;
}

import type { Database } from 'bun:sqlite';
import type { EventType, EventStatus, Severity } from '../domain/event.ts';
import type { EventRow } from '../db/schema/index.ts';

/** The narrow part of an event row: enough to filter, count and tell whether it changed. */
export interface EventHead {
  rowid: number;
  id: string;
  rev: number;
  status: EventStatus;
  type: EventType;
  severity: Severity;
  plate: number;
  lat: number;
  lon: number;
  reportedAt: number;
  firstSeenAt: number;
  lastSeenAt: number;
  updatedAt: number;
  clearedAt: number | null;
}

/** What the read model reads from storage. */
export interface WindowSource {
  /** Heads of the events in the window (active and seen since `since`, or cleared since), in chunks. */
  heads(since: number, chunk: number): Iterable<EventHead[]>;
  /** Full rows, for the events whose serialized form must be (re)built. */
  rows(ids: readonly string[]): EventRow[];
  /** Finish time of the last successful scan; null before the first. */
  dataUpdatedAt(): number | null;
}

const HEAD =
  'rowid AS rowid, id, rev, status, type, severity, plate, lat, lon, reported_at AS reportedAt, first_seen_at AS firstSeenAt, last_seen_at AS lastSeenAt, updated_at AS updatedAt, cleared_at AS clearedAt';
const FULL =
  'id, source_name AS sourceName, source_id AS sourceId, type, subtype, severity, status, plate, district, lat, lon, geometry, road, description, jam, confidence, reported_at AS reportedAt, first_seen_at AS firstSeenAt, last_seen_at AS lastSeenAt, updated_at AS updatedAt, cleared_at AS clearedAt, cells, missed_scans AS missedScans, rev';

type RawFull = Omit<EventRow, 'geometry' | 'jam'> & { geometry: string | null; jam: string | null };

/**
 * The window over SQLite, read in keyset chunks that follow the (status, last_seen_at) and
 * (cleared_at) indexes (each index entry ends in the rowid), so no chunk scans old history.
 */
export function sqliteWindowSource(sqlite: Database): WindowSource {
  const active = sqlite.query<EventHead, [number, number, number, number]>(
    `SELECT ${HEAD} FROM events WHERE status = 'active' AND last_seen_at >= ?1 AND (last_seen_at, rowid) > (?2, ?3) ORDER BY last_seen_at, rowid LIMIT ?4`,
  );
  const cleared = sqlite.query<EventHead, [number, number, number, number]>(
    // cleared_at is set only on cleared events (a reactivation resets it), so the index alone serves.
    `SELECT ${HEAD} FROM events WHERE cleared_at >= ?1 AND (cleared_at, rowid) > (?2, ?3) ORDER BY cleared_at, rowid LIMIT ?4`,
  );
  const byIds = sqlite.query<RawFull, [string]>(`SELECT ${FULL} FROM events WHERE id IN (SELECT value FROM json_each(?))`);
  const lastScan = sqlite.query<{ t: number | null }, []>("SELECT max(finished_at) AS t FROM scan_runs WHERE status IN ('ok', 'partial')");
  return {
    *heads(since, chunk) {
      for (const [stmt, key] of [
        [active, (h: EventHead) => h.lastSeenAt],
        [cleared, (h: EventHead) => h.clearedAt ?? 0],
      ] as const) {
        let k = Number.NEGATIVE_INFINITY;
        let rowid = 0;
        for (;;) {
          const rows = stmt.all(since, k, rowid, chunk);
          if (rows.length > 0) yield rows;
          if (rows.length < chunk) break;
          const last = rows[rows.length - 1]!;
          k = key(last);
          rowid = last.rowid;
        }
      }
    },
    rows(ids) {
      return byIds.all(JSON.stringify(ids)).map((r) => ({
        ...r,
        geometry: r.geometry === null ? null : JSON.parse(r.geometry),
        jam: r.jam === null ? null : JSON.parse(r.jam),
      }));
    },
    dataUpdatedAt: () => lastScan.get()?.t ?? null,
  };
}

import type { Database, SQLQueryBindings } from 'bun:sqlite';
import type { EventType, Severity } from '../domain/event.ts';
import type { EventRow } from '../db/schema/index.ts';
import type { Cursor, ListQuery } from '../read-model/query.ts';
import { haversineKm } from '../read-model/query.ts';

export type HistoryStatus = 'active' | 'cleared' | 'all';

/** A list query reaching into history: the list filters plus a status and a time range. */
export interface HistoryQuery extends ListQuery {
  status: HistoryStatus;
  /** Epoch ms; an event belongs to the range when it was seen during it. */
  from: number;
  to: number;
}

const COLUMNS =
  'id, source_name AS sourceName, source_id AS sourceId, type, subtype, severity, status, plate, district, lat, lon, geometry, road, description, jam, confidence, reported_at AS reportedAt, first_seen_at AS firstSeenAt, last_seen_at AS lastSeenAt, updated_at AS updatedAt, cleared_at AS clearedAt, cells, missed_scans AS missedScans';

type RawRow = Omit<EventRow, 'geometry' | 'jam'> & { geometry: string | null; jam: string | null };

const KM_PER_DEG_LAT = 110.574;
const KM_PER_DEG_LON_EQUATOR = 111.32;

interface Where {
  sql: string;
  params: SQLQueryBindings[];
}

/**
 * The WHERE clause shared by the page and the count. `last_seen_at >= from` first, so SQLite can
 * use the (status, last_seen_at) index for the time range; `near` is a bounding-box prefilter in
 * SQL refined by the exact great-circle distance in JS, as the 24-hour read model does.
 */
function where(q: HistoryQuery): Where {
  const parts: string[] = [];
  const params: SQLQueryBindings[] = [];
  const statuses = q.status === 'all' ? ['active', 'cleared'] : [q.status];
  parts.push(`status IN (${statuses.map(() => '?').join(',')})`, 'last_seen_at >= ?', 'first_seen_at <= ?');
  params.push(...statuses, q.from, q.to);
  if (q.plate !== null) {
    parts.push('plate = ?');
    params.push(q.plate);
  }
  const inList = (column: string, values: ReadonlySet<string> | null) => {
    if (values === null) return;
    parts.push(`${column} IN (${[...values].map(() => '?').join(',')})`);
    params.push(...values);
  };
  inList('type', q.types as ReadonlySet<EventType> | null);
  inList('severity', q.severities as ReadonlySet<Severity> | null);
  if (q.bbox !== null) {
    parts.push('lon >= ? AND lat >= ? AND lon <= ? AND lat <= ?');
    params.push(...q.bbox);
  }
  if (q.near !== null) {
    const dLat = q.near.radiusKm / KM_PER_DEG_LAT;
    const cos = Math.max(0.01, Math.cos((q.near.lat * Math.PI) / 180));
    const dLon = q.near.radiusKm / (KM_PER_DEG_LON_EQUATOR * cos);
    parts.push('lat BETWEEN ? AND ? AND lon BETWEEN ? AND ?');
    params.push(q.near.lat - dLat, q.near.lat + dLat, q.near.lon - dLon, q.near.lon + dLon);
  }
  if (q.updatedSince !== null) {
    parts.push('updated_at >= ?');
    params.push(q.updatedSince);
  }
  return { sql: parts.join(' AND '), params };
}

function toRow(r: RawRow): EventRow {
  return { ...r, geometry: r.geometry === null ? null : JSON.parse(r.geometry), jam: r.jam === null ? null : JSON.parse(r.jam) };
}

export interface HistoryPage {
  rows: EventRow[];
  total: number;
  next: Cursor | null;
}

/** One page of history in the list order (newest reported_at first, ties by id), keyset-paged. */
export function queryHistory(db: Database, q: HistoryQuery): HistoryPage {
  const w = where(q);
  const near = q.near;
  const exact = (r: { lat: number; lon: number }) => near === null || haversineKm(near.lat, near.lon, r.lat, r.lon) <= near.radiusKm;
  let total: number;
  if (near === null) total = db.query<{ n: number }, SQLQueryBindings[]>(`SELECT count(*) AS n FROM events WHERE ${w.sql}`).get(...w.params)!.n;
  else total = db.query<{ lat: number; lon: number }, SQLQueryBindings[]>(`SELECT lat, lon FROM events WHERE ${w.sql}`).all(...w.params).filter(exact).length;

  const pageSql = q.cursor === null ? w.sql : `${w.sql} AND (reported_at < ? OR (reported_at = ? AND id > ?))`;
  const pageParams = q.cursor === null ? w.params : [...w.params, q.cursor.reportedAt, q.cursor.reportedAt, q.cursor.id];
  const stmt = db.query<RawRow, SQLQueryBindings[]>(`SELECT ${COLUMNS} FROM events WHERE ${pageSql} ORDER BY reported_at DESC, id ASC LIMIT ?`);
  const rows: EventRow[] = [];
  let hasMore = false;
  if (near === null) {
    const raw = stmt.all(...pageParams, q.limit + 1);
    hasMore = raw.length > q.limit;
    for (const r of raw.slice(0, q.limit)) rows.push(toRow(r));
  } else {
    // The SQL box holds more than the circle: read on in batches until the page is full.
    for (const r of stmt.iterate(...pageParams, -1)) {
      if (!exact(r)) continue;
      if (rows.length === q.limit) {
        hasMore = true;
        break;
      }
      rows.push(toRow(r));
    }
  }
  const last = rows[rows.length - 1];
  return { rows, total, next: hasMore && last !== undefined ? { reportedAt: last.reportedAt, id: last.id, range: { from: q.from, to: q.to } } : null };
}

export interface HistoryStats {
  total: number;
  by_type: Record<EventType, number>;
  by_severity: Record<Severity, number>;
  by_plate: { plate: number; count: number; by_type: Record<EventType, number> }[];
  created: number;
  cleared: number;
}

/** Aggregates over the events seen in [from, to] (any status), and how many began / were cleared in it. */
export function historyStats(db: Database, from: number, to: number): HistoryStats {
  const rows = db
    .query<{ plate: number; type: EventType; severity: Severity; n: number }, [number, number]>(
      'SELECT plate, type, severity, count(*) AS n FROM events WHERE status IN (\'active\', \'cleared\') AND last_seen_at >= ? AND first_seen_at <= ? GROUP BY plate, type, severity',
    )
    .all(from, to);
  const zero = (): Record<EventType, number> => ({ accident: 0, jam: 0, hazard: 0, road_closure: 0 });
  const byType = zero();
  const bySeverity: Record<Severity, number> = { minor: 0, moderate: 0, major: 0, unknown: 0 };
  const perPlate = new Map<number, { count: number; by_type: Record<EventType, number> }>();
  let total = 0;
  for (const r of rows) {
    total += r.n;
    byType[r.type] += r.n;
    bySeverity[r.severity] += r.n;
    let p = perPlate.get(r.plate);
    if (p === undefined) perPlate.set(r.plate, (p = { count: 0, by_type: zero() }));
    p.count += r.n;
    p.by_type[r.type] += r.n;
  }
  const created = db.query<{ n: number }, [number, number]>('SELECT count(*) AS n FROM events WHERE first_seen_at BETWEEN ? AND ?').get(from, to)!.n;
  const cleared = db.query<{ n: number }, [number, number]>('SELECT count(*) AS n FROM events WHERE cleared_at BETWEEN ? AND ?').get(from, to)!.n;
  return {
    total,
    by_type: byType,
    by_severity: bySeverity,
    by_plate: [...perPlate.entries()].map(([plate, p]) => ({ plate, ...p })).sort((a, b) => b.count - a.count || a.plate - b.plate),
    created,
    cleared,
  };
}

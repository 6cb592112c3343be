import type { Database } from 'bun:sqlite';
import type { Clock } from '../clock.ts';
import type { ChangeType, NormalizedItem, SourceName } from '../domain/event.ts';
import type { EventRow, ScanStatus, SourceOutcome } from '../db/schema/index.ts';
import { errorText, type Logger } from '../log.ts';
import { provinceAt } from '../provinces/index.ts';
import { toApiEvent } from '../read-model/event-json.ts';
import { materiallyChanged } from './diff.ts';
import { eventIdFor } from './event-id.ts';
import { mapPool, yieldToLoop } from './pool.ts';
import type { Cell, CellResult, Source } from './sources/source.ts';

/** Consecutive successful scans of an event's cells that must miss it before it is cleared. */
export const MISSES_TO_CLEAR = 2;
/**
 * Rows written per chunk of the scan transaction before the event loop gets a turn. A write costs
 * ~20 µs (the row, its indexes, the outbox row and its Event JSON): 100 rows hold HTTP requests for
 * ~2 ms; 500 held them ~10 ms (p50 during a 20,000-item scan 5 ms vs 1.1 ms, bench/scan.ts).
 */
const DEFAULT_CHUNK = 100;
/**
 * Items placed in provinces (and given their event id), or stored rows read back, per chunk before
 * yielding: ~2–4 µs each, so a chunk holds the event loop ~2 ms (bench/scan.ts).
 */
const LOCATE_CHUNK = 500;
const MAX_FAILURE_EXAMPLES = 5;

export interface ScannerDeps {
  /**
   * A connection the scanner alone uses. Its transaction stays open across event-loop turns, so
   * every other connection (the HTTP side) keeps reading the previous committed state: readers
   * never see half a scan, and a crash mid-commit rolls the whole scan back.
   */
  writer: Database;
  sources: readonly Source[];
  cells: readonly Cell[];
  clock: Clock;
  logger: Logger;
  /** Yields between chunks; tests may pass a synchronous no-op. */
  pause?: () => Promise<void>;
  chunkSize?: number;
  signal?: AbortSignal;
}

export interface ScanSummary {
  id: number;
  status: ScanStatus;
  startedAt: number;
  finishedAt: number;
  cellsTotal: number;
  cellsOk: number;
  cellsFailed: number;
  items: number;
  outsideTurkey: number;
  created: number;
  updated: number;
  cleared: number;
  errors: string[];
}

interface Seen {
  item: NormalizedItem;
  cells: Set<string>;
  plate: number;
}

interface Change {
  eventId: string;
  change: ChangeType;
  row: EventRow;
}

const EVENT_COLUMNS =
  'id, source_name, source_id, type, subtype, severity, status, plate, district, lat, lon, geometry, road, description, jam, confidence, reported_at, first_seen_at, last_seen_at, updated_at, cleared_at, cells, missed_scans';

interface RawEventRow {
  id: string;
  source_name: SourceName;
  source_id: string;
  type: EventRow['type'];
  subtype: string | null;
  severity: EventRow['severity'];
  status: EventRow['status'];
  plate: number;
  district: string | null;
  lat: number;
  lon: number;
  geometry: string | null;
  road: string | null;
  description: string | null;
  jam: string | null;
  confidence: number;
  reported_at: number;
  first_seen_at: number;
  last_seen_at: number;
  updated_at: number;
  cleared_at: number | null;
  cells: string;
  missed_scans: number;
  rev: number;
}

function fromRaw(r: RawEventRow): EventRow {
  return {
    id: r.id,
    sourceName: r.source_name,
    sourceId: r.source_id,
    type: r.type,
    subtype: r.subtype,
    severity: r.severity,
    status: r.status,
    plate: r.plate,
    district: r.district,
    lat: r.lat,
    lon: r.lon,
    geometry: r.geometry === null ? null : JSON.parse(r.geometry),
    road: r.road,
    description: r.description,
    jam: r.jam === null ? null : JSON.parse(r.jam),
    confidence: r.confidence,
    reportedAt: r.reported_at,
    firstSeenAt: r.first_seen_at,
    lastSeenAt: r.last_seen_at,
    updatedAt: r.updated_at,
    clearedAt: r.cleared_at,
    cells: r.cells,
    missedScans: r.missed_scans,
    rev: r.rev,
  };
}

/** What a sighting sets on an event that is new or changed: it is active, current and unmissed. */
function sighting(item: NormalizedItem, plate: number, cells: string, now: number) {
  return {
    type: item.type,
    subtype: item.subtype,
    severity: item.severity,
    status: 'active' as const,
    plate,
    district: item.district,
    lat: item.location.lat,
    lon: item.location.lon,
    geometry: item.geometry,
    road: item.road,
    description: item.description,
    jam: item.jam,
    confidence: item.confidence,
    reportedAt: item.reportedAt,
    lastSeenAt: now,
    updatedAt: now,
    clearedAt: null,
    cells,
    missedScans: 0,
  };
}

function cellKey(source: SourceName, cellId: string): string {
  return `${source}:${cellId}`;
}

/**
 * One full pass: every cell of every source, then one logical commit of what changed. A failed
 * cell clears nothing; an event is cleared only when every cell that last saw it succeeded in
 * two consecutive scans without it. A plain function: croner only schedules it.
 */
export async function runScan(deps: ScannerDeps): Promise<ScanSummary> {
  const { writer, clock, logger } = deps;
  const pause = deps.pause ?? yieldToLoop;
  const chunk = deps.chunkSize ?? DEFAULT_CHUNK;
  const startedAt = clock();
  const runId = Number(
    writer
      .query<{ id: number }, [number, string]>("INSERT INTO scan_runs (started_at, status, sources, errors) VALUES (?, 'running', ?, '[]') RETURNING id")
      .get(startedAt, JSON.stringify(Object.fromEntries(deps.sources.map((s) => [s.name, {}]))))!.id,
  );

  // 1. Fetch: each source with its own concurrency; sources run side by side.
  const okCells = new Set<string>();
  const outcomes: Record<string, SourceOutcome> = {};
  const seen = new Map<string, Seen>();
  const errors: string[] = [];
  let itemCount = 0;
  await Promise.all(
    deps.sources.map(async (source) => {
      const outcome: SourceOutcome = { cellsOk: 0, cellsFailed: 0, requests: 0, items: 0, failures: [], backingOff: false };
      outcomes[source.name] = outcome;
      await mapPool(deps.cells, source.concurrency, async (cell) => {
        let result: CellResult;
        if (deps.signal?.aborted) result = { ok: false, kind: 'network', error: 'scan aborted (shutting down)', requests: 0 };
        else {
          try {
            result = await source.fetchCell(cell, deps.signal);
          } catch (err) {
            // Sources report upstream trouble as values; a throw is a bug, kept to this cell.
            result = { ok: false, kind: 'parse', error: errorText(err), requests: 0 };
          }
        }
        outcome.requests += result.requests;
        if (!result.ok) {
          outcome.cellsFailed++;
          if (outcome.failures.length < MAX_FAILURE_EXAMPLES) outcome.failures.push({ cell: cell.id, kind: result.kind, error: result.error.slice(0, 300) });
          return;
        }
        outcome.cellsOk++;
        okCells.add(cellKey(source.name, cell.id));
        outcome.items += result.items.length;
        itemCount += result.items.length;
        for (const item of result.items) {
          const key = `${item.source}\u0000${item.sourceId}`;
          const prev = seen.get(key);
          if (prev !== undefined) prev.cells.add(cellKey(source.name, cell.id));
          else seen.set(key, { item, cells: new Set([cellKey(source.name, cell.id)]), plate: 0 });
        }
      });
      outcome.backingOff = source.status().state === 'backing_off';
      if (outcome.cellsFailed > 0) errors.push(`${source.name}: ${outcome.cellsFailed} of ${deps.cells.length} cells failed${outcome.failures[0] ? ` (e.g. ${outcome.failures[0].cell}: ${outcome.failures[0].error})` : ''}`);
    }),
  );

  // 2. Place each item in its province (items outside Turkey are dropped) and key it by event id.
  // Chunked: for 20,000 items the hashing alone held the event loop ~15 ms in one piece.
  let outsideTurkey = 0;
  let n = 0;
  const byId = new Map<string, Seen>();
  for (const s of seen.values()) {
    const p = provinceAt(s.item.location.lat, s.item.location.lon);
    if (p === null) outsideTurkey++;
    else {
      s.plate = p.plate;
      byId.set(eventIdFor(s.item.source, s.item.sourceId), s);
    }
    if (++n % LOCATE_CHUNK === 0) await pause();
  }
  seen.clear();

  // 3. Diff against what is stored, then write it all in one transaction.
  const now = clock();
  const cellsTotal = deps.sources.length * deps.cells.length;
  const cellsOk = okCells.size;
  const status: ScanStatus = cellsOk === 0 ? 'failed' : cellsOk < cellsTotal ? 'partial' : 'ok';
  let created = 0;
  let updated = 0;
  let cleared = 0;
  try {
    writer.exec('BEGIN IMMEDIATE');
    const selectActive = writer.query<RawEventRow, []>(`SELECT ${EVENT_COLUMNS}, rev FROM events WHERE status = 'active'`);
    const selectOne = writer.query<RawEventRow, [string]>(`SELECT ${EVENT_COLUMNS}, rev FROM events WHERE id = ?`);
    const existing = new Map<string, EventRow>();
    // Read back in chunks too: 20,000 active rows (JSON columns parsed) took ~40 ms in one go.
    // Pausing mid-iteration is safe: nothing else uses this connection, and the transaction
    // keeps the snapshot.
    n = 0;
    for (const r of selectActive.iterate()) {
      existing.set(r.id, fromRaw(r));
      if (++n % LOCATE_CHUNK === 0) await pause();
    }
    await pause();
    // New items, and items whose stored event is cleared (seen again), are looked up one by one.
    n = 0;
    for (const id of byId.keys()) {
      if (existing.has(id)) continue;
      const r = selectOne.get(id);
      if (r !== null) existing.set(id, fromRaw(r));
      if (++n % LOCATE_CHUNK === 0) await pause();
    }

    const insert = writer.prepare(
      `INSERT INTO events (${EVENT_COLUMNS}) VALUES ($id, $source_name, $source_id, $type, $subtype, $severity, $status, $plate, $district, $lat, $lon, $geometry, $road, $description, $jam, $confidence, $reported_at, $first_seen_at, $last_seen_at, $updated_at, $cleared_at, $cells, $missed_scans)`,
    );
    const update = writer.prepare(
      `UPDATE events SET rev=rev+1, type=$type, subtype=$subtype, severity=$severity, status=$status, plate=$plate, district=$district, lat=$lat, lon=$lon, geometry=$geometry, road=$road, description=$description, jam=$jam, confidence=$confidence, reported_at=$reported_at, last_seen_at=$last_seen_at, updated_at=$updated_at, cleared_at=$cleared_at, cells=$cells, missed_scans=$missed_scans WHERE id=$id`,
    );
    // Seen again: only last_seen_at moves for clients, unless a silent field (point, confidence…)
    // moved too — then `rev` tells the read model to re-serialize the event.
    const touch = writer.prepare(
      'UPDATE events SET rev = rev + (plate IS NOT ?3 OR district IS NOT ?4 OR lat IS NOT ?5 OR lon IS NOT ?6 OR confidence IS NOT ?7), last_seen_at=?1, missed_scans=0, cells=?2, plate=?3, district=?4, lat=?5, lon=?6, confidence=?7 WHERE id=?8',
    );
    const miss = writer.prepare('UPDATE events SET missed_scans=? WHERE id=?');
    const clear = writer.prepare("UPDATE events SET rev=rev+1, status='cleared', cleared_at=?, updated_at=?, missed_scans=? WHERE id=?");
    const outbox = writer.prepare('INSERT INTO event_changes (event_id, change, at, scan_id, payload) VALUES (?, ?, ?, ?, ?)');

    const changes: Change[] = [];
    let writes = 0;
    const tick = async () => {
      if (++writes % chunk === 0) await pause();
    };
    const params = (row: EventRow) => ({
      id: row.id,
      source_name: row.sourceName,
      source_id: row.sourceId,
      type: row.type,
      subtype: row.subtype,
      severity: row.severity,
      status: row.status,
      plate: row.plate,
      district: row.district,
      lat: row.lat,
      lon: row.lon,
      geometry: row.geometry === null ? null : JSON.stringify(row.geometry),
      road: row.road,
      description: row.description,
      jam: row.jam === null ? null : JSON.stringify(row.jam),
      confidence: row.confidence,
      reported_at: row.reportedAt,
      first_seen_at: row.firstSeenAt,
      last_seen_at: row.lastSeenAt,
      updated_at: row.updatedAt,
      cleared_at: row.clearedAt,
      cells: row.cells,
      missed_scans: row.missedScans,
    });

    for (const [id, s] of byId) {
      const { item } = s;
      const cells = [...s.cells].sort().join(' ');
      const prev = existing.get(id);
      if (prev === undefined) {
        const row: EventRow = {
          id,
          sourceName: item.source,
          sourceId: item.sourceId,
          ...sighting(item, s.plate, cells, now),
          firstSeenAt: now,
          rev: 0,
        };
        insert.run(params(row));
        changes.push({ eventId: id, change: 'created', row });
        created++;
      } else if (prev.status === 'cleared' || materiallyChanged(prev, item)) {
        // Seen again after being cleared, or changed in a way a client acts on.
        const row: EventRow = { ...prev, ...sighting(item, s.plate, cells, now) };
        update.run(params(row));
        changes.push({ eventId: id, change: 'updated', row });
        updated++;
      } else {
        touch.run(now, cells, s.plate, item.district, item.location.lat, item.location.lon, item.confidence, id);
      }
      await tick();
    }

    for (const [id, row] of existing) {
      if (row.status !== 'active' || byId.has(id)) continue;
      const keys = row.cells === '' ? [] : row.cells.split(' ');
      // A failed (or unscanned) cell clears nothing: the event may simply not have been looked for.
      if (keys.length === 0 || !keys.every((k) => okCells.has(k))) continue;
      const misses = row.missedScans + 1;
      if (misses >= MISSES_TO_CLEAR) {
        clear.run(now, now, misses, id);
        changes.push({ eventId: id, change: 'cleared', row: { ...row, status: 'cleared', clearedAt: now, updatedAt: now, missedScans: misses } });
        cleared++;
      } else miss.run(misses, id);
      await tick();
    }

    for (const c of changes) {
      outbox.run(c.eventId, c.change, now, runId, JSON.stringify(toApiEvent(c.row)));
      await tick();
    }

    writer
      .query(
        'UPDATE scan_runs SET finished_at=?, status=?, sources=?, cells_total=?, cells_ok=?, cells_failed=?, items=?, created=?, updated=?, cleared=?, errors=? WHERE id=?',
      )
      .run(clock(), status, JSON.stringify(outcomes), cellsTotal, cellsOk, cellsTotal - cellsOk, itemCount, created, updated, cleared, JSON.stringify(errors), runId);
    writer.exec('COMMIT');
  } catch (err) {
    if (writer.inTransaction) writer.exec('ROLLBACK');
    const msg = `commit failed: ${errorText(err)}`;
    logger.error('scan commit failed', { scan_id: runId, error: errorText(err) });
    try {
      writer.query("UPDATE scan_runs SET finished_at=?, status='failed', errors=? WHERE id=?").run(clock(), JSON.stringify([...errors, msg]), runId);
    } catch (recordErr) {
      // The database may still be locked by whoever made the commit fail. The run stays 'running'
      // until the next start marks it interrupted; the caller must see the first error, not this one.
      logger.error('scan failure not recorded', { scan_id: runId, error: errorText(recordErr) });
    }
    throw err;
  }
  const finishedAt = clock();
  const summary: ScanSummary = {
    id: runId,
    status,
    startedAt,
    finishedAt,
    cellsTotal,
    cellsOk,
    cellsFailed: cellsTotal - cellsOk,
    items: itemCount,
    outsideTurkey,
    created,
    updated,
    cleared,
    errors,
  };
  // A scan with failed cells says why in the log too, not only in scan_runs.errors.
  const log = status === 'ok' ? logger.info : logger.warn;
  log('scan finished', { ...summary, errors: errors.slice(0, 3), duration_ms: finishedAt - startedAt });
  return summary;
}

/** No scan runs this long: a 'running' row older than this has no live process behind it. */
export const STALE_RUN_MS = 24 * 60 * 60 * 1000;

/**
 * A scan interrupted by a crash left its run row 'running' (its writes were rolled back with the
 * transaction). Marked at start so health and history tell the truth. `startedBefore` limits it to
 * older runs, for callers that may share the database with a live server (`trafik scan --once`):
 * that server's scan in flight is 'running' too, and is not ours to close.
 */
export function markInterruptedScans(writer: Database, now: number, startedBefore: number = Number.POSITIVE_INFINITY): number {
  return writer
    .query("UPDATE scan_runs SET status='failed', finished_at=?, errors='[\"interrupted: the process stopped during this scan\"]' WHERE status='running' AND started_at < ?")
    .run(now, startedBefore).changes;
}

import type { Db } from '../../src/db/client.ts';
import { events, scanRuns, type NewEventRow } from '../../src/db/schema/index.ts';

let n = 0;

/** An event row with sensible defaults; every field can be overridden. */
export function eventRow(over: Partial<NewEventRow> = {}, now = Date.now()): NewEventRow {
  n++;
  const id = over.id ?? `evt_test${String(n).padStart(6, '0')}`;
  return {
    id,
    sourceName: 'waze',
    sourceId: `src-${id}`,
    type: 'accident',
    subtype: null,
    severity: 'minor',
    status: 'active',
    plate: 34,
    district: null,
    lat: 41.0082,
    lon: 28.9784,
    geometry: null,
    road: null,
    description: null,
    jam: null,
    confidence: 0.8,
    reportedAt: now - n * 1000,
    firstSeenAt: now - 60_000,
    lastSeenAt: now - 1000,
    updatedAt: now - 60_000,
    clearedAt: null,
    cells: 'waze:c001',
    missedScans: 0,
    ...over,
  };
}

export function insertEvents(db: Db, rows: NewEventRow[]): void {
  for (let i = 0; i < rows.length; i += 500) db.insert(events).values(rows.slice(i, i + 500)).run();
}

/** Records a finished successful scan so `data_updated_at` / Last-Modified have a value. */
export function insertScan(db: Db, finishedAt: number, over: Partial<typeof scanRuns.$inferInsert> = {}): void {
  db.insert(scanRuns)
    .values({ startedAt: finishedAt - 5000, finishedAt, status: 'ok', sources: {}, cellsTotal: 220, cellsOk: 220, cellsFailed: 0, errors: [], ...over })
    .run();
}

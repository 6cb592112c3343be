import { openDatabase } from '../../src/db/client.ts';
import { applyMigrations } from '../../src/db/migrate.ts';
import { events, scanRuns, type NewEventRow } from '../../src/db/schema/index.ts';
import { PROVINCES } from '../../src/provinces/index.ts';
import { EVENT_TYPES, SEVERITIES } from '../../src/domain/event.ts';

/** A database with `n` active events spread over the provinces, as a scan would have left it. */
export function seedDatabase(path: string, n: number, now = Date.now()): void {
  const { db, sqlite } = openDatabase(path);
  applyMigrations(db);
  const rows: NewEventRow[] = [];
  for (let i = 0; i < n; i++) {
    const p = PROVINCES[i % PROVINCES.length]!;
    const type = EVENT_TYPES[i % 4]!;
    rows.push({
      id: `evt_bench${String(i).padStart(8, '0')}`,
      sourceName: 'waze',
      sourceId: `bench-${i}`,
      type,
      subtype: type === 'accident' ? 'accident_minor' : null,
      severity: SEVERITIES[i % 4]!,
      status: 'active',
      plate: p.plate,
      district: 'Merkez',
      lat: p.lat + ((i % 17) - 8) * 0.001,
      lon: p.lon + ((i % 13) - 6) * 0.001,
      geometry: type === 'jam' ? { type: 'LineString', coordinates: [[p.lon, p.lat], [p.lon + 0.01, p.lat + 0.01]] } : null,
      road: `D${100 + (i % 900)} Karayolu`,
      description: i % 3 === 0 ? 'Sağ şerit kapalı, dikkatli olun.' : null,
      jam: type === 'jam' ? { speed_kmh: 12, length_m: 850, delay_s: 240, level: 3 } : null,
      confidence: 0.7,
      reportedAt: now - i * 7_000,
      firstSeenAt: now - 3_600_000,
      lastSeenAt: now - 30_000,
      updatedAt: now - 3_600_000,
      clearedAt: null,
      cells: 'waze:bench',
      missedScans: 0,
    });
  }
  sqlite.transaction(() => {
    for (let i = 0; i < rows.length; i += 500) db.insert(events).values(rows.slice(i, i + 500)).run();
    db.insert(scanRuns).values({ startedAt: now - 60_000, finishedAt: now - 50_000, status: 'ok', sources: {}, cellsTotal: 220, cellsOk: 220, cellsFailed: 0, errors: [] }).run();
  })();
  // Everything into the main file, so a copy of it alone holds the data (bench/limits.ts copies it).
  sqlite.exec('PRAGMA wal_checkpoint(TRUNCATE)');
  sqlite.close();
}

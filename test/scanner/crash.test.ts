/**
 * kill -9 in the middle of a scan's commit: the scan's writes are one transaction spanning many
 * event-loop turns (and, at this size, spilling uncommitted pages into the WAL). After the kill the
 * database must be intact and hold exactly the previous scan's state; the next start marks the
 * run interrupted and the next scan carries on.
 */
import { Database } from 'bun:sqlite';
import { afterEach, expect, test } from 'bun:test';
import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { openDatabase } from '../../src/db/client.ts';
import { silentLogger } from '../../src/log.ts';
import { provinceAt } from '../../src/provinces/index.ts';
import { markInterruptedScans, runScan } from '../../src/scanner/scan.ts';
import { ReplaySource } from '../../src/scanner/sources/replay.ts';
import { seededRandom, wazeAlert, wazeResponse } from '../../scripts/upstream-payloads.ts';
import { cells, replayDir, scanHarness, type ReplayDir, type ScanHarness } from '../helpers/scan.ts';

const T0 = Date.UTC(2026, 10, 21, 7, 30);
const CELLS = cells('ist', 'ank');

/** Alert `i` of a deterministic set: half in İstanbul, half in Ankara, all on land. */
function makeAlerts(from: number, to: number): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [];
  for (let i = from; i < to; i++) {
    const r = seededRandom(i + 1);
    let lat: number;
    let lon: number;
    do {
      [lat, lon] = i % 2 === 0 ? [41.0 + r() * 0.1, 28.85 + r() * 0.12] : [39.85 + r() * 0.15, 32.65 + r() * 0.3];
    } while (provinceAt(lat, lon) === null);
    out.push(wazeAlert({ uuid: `crash-${i}`, type: i % 3 === 0 ? 'HAZARD' : 'ACCIDENT', subtype: i % 3 === 0 ? 'HAZARD_ON_ROAD_POT_HOLE' : 'ACCIDENT_MINOR', lat, lon, pubMillis: T0 - (i % 3600) * 1000, street: `Cadde ${i % 97}`, city: i % 2 === 0 ? 'Fatih' : 'Çankaya', reliability: 6 + (i % 5), reportDescription: `Olay ${i}` }));
  }
  return out;
}

function digest(db: Database): string {
  const rows = db.query('SELECT * FROM events ORDER BY id').all();
  return `${rows.length}:${Bun.hash(JSON.stringify(rows)).toString(16)}`;
}

async function waitForLine(stream: ReadableStream<Uint8Array>, prefix: string, timeoutMs: number): Promise<string> {
  const reader = stream.getReader();
  const decoder = new TextDecoder();
  let buf = '';
  const deadline = Date.now() + timeoutMs;
  try {
    while (Date.now() < deadline) {
      const { value, done } = await Promise.race([reader.read(), Bun.sleep(deadline - Date.now()).then(() => ({ value: undefined, done: true }))]);
      if (done) break;
      buf += decoder.decode(value, { stream: true });
      const line = buf.split('\n').find((l) => l.startsWith(prefix));
      if (line !== undefined) return line;
    }
  } finally {
    reader.releaseLock();
  }
  throw new Error(`no "${prefix}" line within ${timeoutMs} ms; got: ${buf.slice(0, 500)}`);
}

let h: ScanHarness | undefined;
let rd: ReplayDir | undefined;
afterEach(() => {
  h?.cleanup();
  rd?.cleanup();
});

test('kill -9 while the scan transaction is open leaves a consistent database; the next start carries on', async () => {
  h = scanHarness();
  h.clock.set(T0);
  rd = replayDir();
  rd.write('waze', 'big.json', wazeResponse(makeAlerts(0, 2000), [], T0));
  const first = await h.scan([new ReplaySource({ dir: rd.dir })], CELLS);
  expect(first).toMatchObject({ status: 'ok', created: 2000 });
  const before = { events: digest(h.db.sqlite), changes: h.changes().length, runs: h.runs().length };
  const path = h.db.path;
  h.writer.sqlite.exec('PRAGMA wal_checkpoint(TRUNCATE)');
  expect(statSync(`${path}-wal`).size).toBe(0);
  h.writer.sqlite.close();
  h.db.sqlite.close();

  // 1,000 of the first set stay, 1,000 go, 19,000 are new: ~40,000 writes in chunks of 100.
  rd.write('waze', 'big.json', wazeResponse(makeAlerts(1000, 21_000), [], T0));
  const child = Bun.spawn(['bun', join(import.meta.dir, '..', 'helpers', 'crash-scan.ts')], {
    env: { ...process.env, CRASH_DB: path, CRASH_REPLAY_DIR: rd.dir, CRASH_CHUNK: '100', CRASH_MARK_AFTER: '300', CRASH_PAUSE_MS: '20' },
    stdout: 'pipe',
    stderr: 'pipe',
  });
  const marker = await waitForLine(child.stdout, 'IN_TRANSACTION', 15_000);
  child.kill('SIGKILL');
  expect(await child.exited).not.toBe(0);
  expect(child.signalCode).toBe('SIGKILL');
  // The open transaction had already spilled megabytes of uncommitted pages into the WAL (emptied
  // above; the only committed write since is the run's 'running' row): the hard case.
  expect(Number(marker.split(' ')[1])).toBeGreaterThan(1_000_000);
  expect(existsSync(`${path}-wal`)).toBe(true);

  // The next start: fresh connections on the same file.
  const main = openDatabase(path);
  const writer = openDatabase(path);
  try {
    expect(main.sqlite.query('PRAGMA integrity_check').all()).toEqual([{ integrity_check: 'ok' }]);
    expect(digest(main.sqlite)).toBe(before.events); // no half scan: exactly the previous state
    expect(main.sqlite.query<{ n: number }, []>('SELECT count(*) AS n FROM event_changes').get()!.n).toBe(before.changes);
    const runs = main.sqlite.query<{ status: string; finished_at: number | null }, []>('SELECT status, finished_at FROM scan_runs ORDER BY id').all();
    expect(runs).toEqual([
      { status: 'ok', finished_at: expect.any(Number) },
      { status: 'running', finished_at: null },
    ]);
    expect(runs.length).toBe(before.runs + 1);

    expect(markInterruptedScans(writer.sqlite, Date.now())).toBe(1);
    expect(main.sqlite.query<{ status: string; errors: string }, []>('SELECT status, errors FROM scan_runs ORDER BY id DESC LIMIT 1').get()).toEqual({
      status: 'failed',
      errors: '["interrupted: the process stopped during this scan"]',
    });

    const next = await runScan({ writer: writer.sqlite, sources: [new ReplaySource({ dir: rd.dir })], cells: CELLS, clock: () => T0 + 180_000, logger: silentLogger, chunkSize: 2000 });
    expect(next).toMatchObject({ status: 'ok', created: 19_000, updated: 0, cleared: 0 });
    expect(main.sqlite.query<{ n: number }, []>("SELECT count(*) AS n FROM events WHERE status = 'active'").get()!.n).toBe(21_000);
    expect(main.sqlite.query<{ n: number }, []>('SELECT count(*) AS n FROM events WHERE missed_scans = 1').get()!.n).toBe(1000);
    expect(main.sqlite.query<{ n: number }, []>('SELECT count(*) AS n FROM event_changes').get()!.n).toBe(before.changes + 19_000);
    expect(main.sqlite.query('PRAGMA integrity_check').all()).toEqual([{ integrity_check: 'ok' }]);
  } finally {
    writer.sqlite.close();
    main.sqlite.close();
  }
}, 30_000);

/**
 * Test-only entry for test/scanner/crash.test.ts: one runScan over a replay directory with a tiny
 * chunk size, so its transaction spans many event-loop turns. Once the transaction has made
 * CRASH_MARK_AFTER pauses it prints `IN_TRANSACTION <wal bytes>` and slows down, so the parent's
 * kill -9 lands while the transaction is open. Prints `COMMITTED` if it ever gets that far.
 *
 *   CRASH_DB, CRASH_REPLAY_DIR, CRASH_CHUNK, CRASH_MARK_AFTER, CRASH_PAUSE_MS
 */
import { statSync } from 'node:fs';
import { openDatabase } from '../../src/db/client.ts';
import { silentLogger } from '../../src/log.ts';
import { yieldToLoop } from '../../src/scanner/pool.ts';
import { runScan } from '../../src/scanner/scan.ts';
import { ReplaySource } from '../../src/scanner/sources/replay.ts';
import { cells } from './scan.ts';

function env(name: string): string {
  const v = process.env[name];
  if (v === undefined || v === '') throw new Error(`${name} is required`);
  return v;
}

const dbPath = env('CRASH_DB');
const markAfter = Number(env('CRASH_MARK_AFTER'));
const pauseMs = Number(env('CRASH_PAUSE_MS'));
const writer = openDatabase(dbPath);
let inTx = 0;
const pause = async (): Promise<void> => {
  if (!writer.sqlite.inTransaction) return yieldToLoop();
  inTx++;
  if (inTx === markAfter) {
    let wal = 0;
    try {
      wal = statSync(`${dbPath}-wal`).size;
    } catch {}
    process.stdout.write(`IN_TRANSACTION ${wal}\n`);
  }
  if (inTx >= markAfter) await Bun.sleep(pauseMs);
  else await yieldToLoop();
};

await runScan({
  writer: writer.sqlite,
  sources: [new ReplaySource({ dir: env('CRASH_REPLAY_DIR') })],
  cells: cells('ist', 'ank'),
  clock: Date.now,
  logger: silentLogger,
  pause,
  chunkSize: Number(env('CRASH_CHUNK')),
});
process.stdout.write(`COMMITTED after ${inTx} pauses\n`);

import { Database } from 'bun:sqlite';
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { drizzle, type BunSQLiteDatabase } from 'drizzle-orm/bun-sqlite';
import * as schema from './schema/index.ts';

/** True for SQLite's "database is locked" (another connection holds the write lock). */
export function isBusy(err: unknown): boolean {
  return err instanceof Error && ((err as { code?: string }).code === 'SQLITE_BUSY' || /database is locked/i.test(err.message));
}

export type Db = BunSQLiteDatabase<typeof schema> & { $client: Database };

export interface OpenedDb {
  sqlite: Database;
  db: Db;
}

/**
 * Opens (creating file and folder if missing) the one SQLite file the process works on.
 * WAL lets the CLI and the server share the file; synchronous=NORMAL is durable across process
 * crashes in WAL mode and ~6× cheaper per commit than FULL (STACK.md §3).
 */
export function openDatabase(path: string, opts: { busyTimeoutMs?: number } = {}): OpenedDb {
  if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true });
  const sqlite = new Database(path, { create: true, strict: true });
  // bun:sqlite waits for a lock synchronously, freezing the event loop. The server's background
  // writers (quota flush, webhook worker) pass 0 and retry on SQLITE_BUSY instead of waiting out
  // the scanner's transaction; the CLI keeps the default and simply waits.
  sqlite.exec(`PRAGMA busy_timeout = ${Math.max(0, Math.floor(opts.busyTimeoutMs ?? 5000))}`);
  sqlite.exec('PRAGMA journal_mode = WAL');
  sqlite.exec('PRAGMA synchronous = NORMAL');
  sqlite.exec('PRAGMA foreign_keys = ON');
  const db = drizzle({ client: sqlite, schema }) as Db;
  return { sqlite, db };
}

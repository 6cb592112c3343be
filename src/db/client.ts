import { Database } from 'bun:sqlite';
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { drizzle, type BunSQLiteDatabase } from 'drizzle-orm/bun-sqlite';
import * as schema from './schema/index.ts';

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
export function openDatabase(path: string): OpenedDb {
  if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true });
  const sqlite = new Database(path, { create: true, strict: true });
  sqlite.exec('PRAGMA busy_timeout = 5000');
  sqlite.exec('PRAGMA journal_mode = WAL');
  sqlite.exec('PRAGMA synchronous = NORMAL');
  sqlite.exec('PRAGMA foreign_keys = ON');
  const db = drizzle({ client: sqlite, schema }) as Db;
  return { sqlite, db };
}

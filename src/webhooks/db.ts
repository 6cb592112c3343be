/** The bun:sqlite handle behind either a drizzle `Db` or a raw `Database`, plus prepared-statement caching. */
import { Database, type SQLQueryBindings, type Statement } from 'bun:sqlite';
import type { Db } from '../db/client.ts';
import { isBusy } from '../db/client.ts';

export type DbHandle = Database | Db;

export function sqliteOf(db: DbHandle): Database {
  return db instanceof Database ? db : db.$client;
}

const cache = new WeakMap<Database, Map<string, Statement>>();

/** A statement prepared once per connection (bun:sqlite's `query` caches too, but per SQL text lookups cost). */
export function stmt<R = unknown, P extends SQLQueryBindings[] = SQLQueryBindings[]>(db: Database, sql: string): Statement<R, P> {
  let m = cache.get(db);
  if (m === undefined) {
    m = new Map();
    cache.set(db, m);
  }
  let s = m.get(sql);
  if (s === undefined) {
    s = db.prepare(sql);
    m.set(sql, s);
  }
  return s as unknown as Statement<R, P>;
}

/**
 * Runs `fn` in one BEGIN IMMEDIATE transaction. Returns `{ busy: true }` without running anything
 * when another connection holds the write lock (the caller keeps its state and retries later); any
 * other error rolls back and is thrown.
 */
export function writeTx<T>(db: Database, fn: () => T): { busy: true } | { busy: false; value: T } {
  try {
    db.exec('BEGIN IMMEDIATE');
  } catch (err) {
    if (isBusy(err)) return { busy: true };
    throw err;
  }
  try {
    const value = fn();
    db.exec('COMMIT');
    return { busy: false, value };
  } catch (err) {
    if (db.inTransaction) db.exec('ROLLBACK');
    if (isBusy(err)) return { busy: true };
    throw err;
  }
}

export { isBusy };

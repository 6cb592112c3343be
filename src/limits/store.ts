/**
 * SQLite side of the limits: quota rows read on first sight and written behind, last-used times
 * of keys, and the per-IP windows saved at a graceful stop.
 *
 * Write-behind runs on the server's main connection, on the event loop, while the scanner may hold
 * the write lock on its own connection across event-loop turns. A bun:sqlite call that meets a
 * lock sleeps in `busy_timeout` synchronously — freezing every request — so writes here run with
 * `busy_timeout` set to `waitMs` (0 on the hot path): a locked database fails at once with
 * SQLITE_BUSY, and the caller keeps its deltas for the next flush.
 */
import type { Database, Statement } from 'bun:sqlite';
import type { QuotaDelta } from './quota.ts';
import type { WindowRow } from './sliding-window.ts';

export class LimitsStore {
  private readonly loadStmt: Statement<{ count: number }, [string, string]>;
  private readonly upsertStmt: Statement<unknown, [string, string, number, number]>;
  private readonly touchStmt: Statement<unknown, [number, string, number]>;
  private readonly defaultTimeout: number;

  constructor(private readonly db: Database) {
    this.loadStmt = db.query('SELECT count FROM quota_usage WHERE subject = ? AND period = ?');
    this.upsertStmt = db.query(
      'INSERT INTO quota_usage (subject, period, count, updated_at) VALUES (?1, ?2, ?3, ?4) ON CONFLICT (subject, period) DO UPDATE SET count = count + excluded.count, updated_at = excluded.updated_at',
    );
    this.touchStmt = db.query('UPDATE api_keys SET last_used_at = ?1 WHERE id = ?2 AND (last_used_at IS NULL OR last_used_at < ?3)');
    const row = db.query<{ timeout: number }, []>('PRAGMA busy_timeout').get();
    this.defaultTimeout = row?.timeout ?? 5000;
  }

  loadQuota(subject: string, period: string): number {
    return this.loadStmt.get(subject, period)?.count ?? 0;
  }

  /**
   * One short transaction: quota deltas added, last-used times moved forward. Throws (after
   * rolling back) if the write lock is not free within `waitMs`; nothing is half-written.
   */
  writeBehind(deltas: readonly QuotaDelta[], uses: ReadonlyMap<string, number>, now: number, waitMs: number): void {
    if (deltas.length === 0 && uses.size === 0) return;
    this.locked(waitMs, () => {
      for (const { entry, delta } of deltas) this.upsertStmt.run(entry.subject, entry.period, delta, now);
      for (const [id, at] of uses) this.touchStmt.run(at, id, at);
    });
  }

  /** Replaces the saved windows (graceful stop). */
  saveWindows(rows: readonly WindowRow[], waitMs: number): void {
    this.locked(waitMs, () => {
      this.db.run('DELETE FROM rate_windows');
      const ins = this.db.query('INSERT INTO rate_windows (bucket, window_start, current, previous) VALUES (?, ?, ?, ?)');
      for (const r of rows) ins.run(r.bucket, r.windowStart, r.current, r.previous);
    });
  }

  /** The saved windows, removed from the table (start). */
  takeWindows(waitMs: number): WindowRow[] {
    let rows: WindowRow[] = [];
    this.locked(waitMs, () => {
      rows = this.db
        .query<{ bucket: string; window_start: number; current: number; previous: number }, []>('SELECT bucket, window_start, current, previous FROM rate_windows')
        .all()
        .map((r) => ({ bucket: r.bucket, windowStart: r.window_start, current: r.current, previous: r.previous }));
      this.db.run('DELETE FROM rate_windows');
    });
    return rows;
  }

  private locked(waitMs: number, body: () => void): void {
    const changeTimeout = waitMs !== this.defaultTimeout;
    if (changeTimeout) this.db.run(`PRAGMA busy_timeout = ${Math.max(0, Math.floor(waitMs))}`);
    try {
      this.db.run('BEGIN IMMEDIATE');
      try {
        body();
        this.db.run('COMMIT');
      } catch (err) {
        if (this.db.inTransaction) this.db.run('ROLLBACK');
        throw err;
      }
    } finally {
      if (changeTimeout) this.db.run(`PRAGMA busy_timeout = ${this.defaultTimeout}`);
    }
  }
}

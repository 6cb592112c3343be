import type { Database } from 'bun:sqlite';
import { hostname } from 'node:os';
import type { Clock } from '../clock.ts';

export interface LeaseRow {
  holder: string;
  host: string;
  pid: number;
  since: number;
  expiresAt: number;
}

export type Acquired = { ok: true } | { ok: false; heldBy: LeaseRow };

export interface LeaseOptions {
  /** What the lease is for (`serve`). */
  name: string;
  /** This process: `host:pid:random` (see `processHolder`). */
  holder: { id: string; host: string; pid: number };
  /** A holder that stops renewing loses the lease after this long. */
  ttlMs: number;
  clock: Clock;
  /** Whether a process of this host runs (default: signal 0); a dead holder's lease is free at once. */
  isAlive?: (pid: number) => boolean;
}

/** This process as a lease holder; the random part tells a restarted process with a reused pid apart. */
export function processHolder(): { id: string; host: string; pid: number } {
  const host = hostname();
  return { id: `${host}:${process.pid}:${crypto.randomUUID().slice(0, 8)}`, host, pid: process.pid };
}

function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    // EPERM: it exists, under another user.
    return (err as { code?: string }).code === 'EPERM';
  }
}

/**
 * A named lease in the `leases` table: one holder at a time. Free when nobody holds it, when the
 * holder stopped renewing it for `ttlMs`, or when the holder was a process of this host that no
 * longer runs (a `kill -9` does not block the restart). Each call is one short statement or
 * transaction on the connection given, so the caller chooses how long it may wait for the lock.
 */
export class DatabaseLease {
  private readonly isAlive: (pid: number) => boolean;

  constructor(
    private readonly sqlite: Database,
    private readonly opts: LeaseOptions,
  ) {
    this.isAlive = opts.isAlive ?? pidAlive;
  }

  acquire(): Acquired {
    const { name, holder, ttlMs, clock } = this.opts;
    const now = clock();
    return this.sqlite.transaction((): Acquired => {
      const row = this.sqlite
        .query<LeaseRow, [string]>('SELECT holder, host, pid, since, expires_at AS expiresAt FROM leases WHERE name = ?')
        .get(name);
      const free = row === null || row.holder === holder.id || row.expiresAt <= now || (row.host === holder.host && row.pid !== holder.pid && !this.isAlive(row.pid));
      if (!free) return { ok: false, heldBy: row };
      this.sqlite
        .query('INSERT OR REPLACE INTO leases (name, holder, host, pid, since, expires_at) VALUES (?, ?, ?, ?, ?, ?)')
        .run(name, holder.id, holder.host, holder.pid, row?.holder === holder.id ? row.since : now, now + ttlMs);
      return { ok: true };
    }).immediate();
  }

  /** Extends the lease; false when it is no longer ours (taken over after it expired). Throws when the database is busy. */
  renew(): boolean {
    const { name, holder, ttlMs, clock } = this.opts;
    return this.sqlite.query('UPDATE leases SET expires_at = ? WHERE name = ? AND holder = ?').run(clock() + ttlMs, name, holder.id).changes === 1;
  }

  /** Gives the lease back (a graceful stop), if it is still ours. */
  release(): void {
    this.sqlite.query('DELETE FROM leases WHERE name = ? AND holder = ?').run(this.opts.name, this.opts.holder.id);
  }
}

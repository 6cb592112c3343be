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

let self: { id: string; host: string; pid: number } | null = null;

/**
 * This process as a lease holder, the same for its whole life. The random part tells a restarted
 * process that got the same pid (`bun --watch`, pid 1 in a container) from the one before it.
 */
export function processHolder(): { id: string; host: string; pid: number } {
  const host = hostname();
  self ??= { id: `${host}:${process.pid}:${crypto.randomUUID().slice(0, 8)}`, host, pid: process.pid };
  return self;
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

  /** The current holder, read without taking the write lock (WAL readers never wait). */
  holder(): LeaseRow | null {
    return this.sqlite.query<LeaseRow, [string]>('SELECT holder, host, pid, since, expires_at AS expiresAt FROM leases WHERE name = ?').get(this.opts.name);
  }

  private isFree(row: LeaseRow | null, now: number): boolean {
    const me = this.opts.holder;
    if (row === null || row.holder === me.id || row.expiresAt <= now) return true;
    if (row.host !== me.host) return false;
    // This host: our own pid under another id is a process before us; another pid must still run.
    return row.pid === me.pid || !this.isAlive(row.pid);
  }

  /** Takes the lease when it is free; a live holder is refused before any write lock is asked for. */
  acquire(): Acquired {
    const { name, holder, ttlMs, clock } = this.opts;
    const now = clock();
    const seen = this.holder();
    if (!this.isFree(seen, now)) return { ok: false, heldBy: seen! };
    return this.sqlite.transaction((): Acquired => {
      const row = this.holder();
      if (!this.isFree(row, now)) return { ok: false, heldBy: row! };
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

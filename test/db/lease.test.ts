import { afterEach, expect, test } from 'bun:test';
import { DatabaseLease, type LeaseOptions } from '../../src/db/lease.ts';
import { tempDb, type TempDb } from '../helpers/db.ts';

let db: TempDb;
afterEach(() => db.cleanup());

const T0 = Date.parse('2026-11-21T10:00:00Z');
function lease(id: string, over: Partial<LeaseOptions> & { host?: string; pid?: number; now?: () => number } = {}): DatabaseLease {
  return new DatabaseLease(db.sqlite, {
    name: 'serve',
    holder: { id, host: over.host ?? 'vm1', pid: over.pid ?? 100 },
    ttlMs: 60_000,
    clock: over.now ?? (() => T0),
    isAlive: over.isAlive ?? (() => true),
  });
}

test('one holder at a time; the holder may take it again; release frees it', () => {
  db = tempDb();
  const a = lease('vm1:100:a');
  const b = lease('vm1:200:b', { pid: 200 });
  expect(a.acquire()).toEqual({ ok: true });
  expect(a.acquire()).toEqual({ ok: true });
  const refused = b.acquire();
  expect(refused.ok).toBe(false);
  expect(!refused.ok && refused.heldBy).toEqual({ holder: 'vm1:100:a', host: 'vm1', pid: 100, since: T0, expiresAt: T0 + 60_000 });
  a.release();
  expect(b.acquire()).toEqual({ ok: true });
  // Releasing a lease one no longer holds changes nothing.
  a.release();
  expect(a.acquire().ok).toBe(false);
});

test('an expired lease is free; renewing keeps it; a lease taken over cannot be renewed', () => {
  db = tempDb();
  let now = T0;
  const clock = () => now;
  const a = lease('vm1:100:a', { now: clock });
  const b = lease('vm2:100:b', { host: 'vm2', now: clock });
  expect(a.acquire().ok).toBe(true);
  now += 50_000;
  expect(a.renew()).toBe(true);
  now += 50_000;
  expect(b.acquire().ok).toBe(false); // renewed 50 s ago: still held
  now += 10_001;
  expect(b.acquire().ok).toBe(true); // not renewed for 60 s: expired
  expect(a.renew()).toBe(false);
});

test("a holder of this host that no longer runs frees its lease at once (kill -9, then restart)", () => {
  db = tempDb();
  const alive = new Set([100]);
  const dead = lease('vm1:100:a', { pid: 100 });
  expect(dead.acquire().ok).toBe(true);
  const restarted = lease('vm1:300:c', { pid: 300, isAlive: (pid) => alive.has(pid) });
  expect(restarted.acquire().ok).toBe(false);
  alive.delete(100);
  expect(restarted.acquire().ok).toBe(true);
  // Another host cannot tell whether the process runs: it waits for the lease to expire.
  const other = lease('vm2:300:d', { host: 'vm2', pid: 300, isAlive: () => false });
  expect(other.acquire().ok).toBe(false);
});

test('a process that got the same pid as the holder before it (bun --watch, pid 1 in a container) takes the lease', () => {
  db = tempDb();
  expect(lease('vm1:1:old', { pid: 1 }).acquire().ok).toBe(true);
  const restarted = lease('vm1:1:new', { pid: 1, isAlive: () => true });
  expect(restarted.acquire()).toEqual({ ok: true });
  expect(restarted.holder()).toMatchObject({ holder: 'vm1:1:new', pid: 1 });
});

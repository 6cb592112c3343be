import { afterEach, beforeEach, describe, expect, test } from 'bun:test';
import { openDatabase, type OpenedDb } from '../../src/db/client.ts';
import { Limits } from '../../src/limits/index.ts';
import { MonthlyQuota } from '../../src/limits/quota.ts';
import { silentLogger } from '../../src/log.ts';
import { tempDb, type TempDb } from '../helpers/db.ts';

const NOW = Date.parse('2026-11-21T10:00:00Z');

describe('MonthlyQuota (in memory)', () => {
  test('a subject is read once, then counted in memory', () => {
    const loads: string[] = [];
    const q = new MonthlyQuota({ limit: 5, load: (s, p) => (loads.push(`${s}@${p}`), s === 'ip:1.2.3.4' ? 3 : 0) });
    const e = q.entry('1.2.3.4', null, NOW);
    expect(e.count).toBe(3);
    expect(q.remaining(e)).toBe(2);
    q.add(e);
    q.add(e);
    expect(q.exhausted(e)).toBe(true);
    expect(q.entry('1.2.3.4', null, NOW + 1)).toBe(e);
    expect(loads).toEqual(['ip:1.2.3.4@2026-11']);
    const k = q.entry('key_AAAAAAAAAAAAAAAA', 'key_AAAAAAAAAAAAAAAA', NOW);
    expect(k.subject).toBe('key:key_AAAAAAAAAAAAAAAA');
    expect(k.keyId).toBe('key_AAAAAAAAAAAAAAAA');
  });

  test('pending deltas survive a failed write and go out with the next', () => {
    const q = new MonthlyQuota({ limit: 100, load: () => 0 });
    const e = q.entry('a', null, NOW);
    q.add(e);
    q.add(e);
    const first = q.pending();
    expect(first.map((d) => d.delta)).toEqual([2]);
    // The write failed: no commit. More requests arrive.
    q.add(e);
    const second = q.pending();
    expect(second.map((d) => d.delta)).toEqual([3]);
    q.commit(second);
    expect(q.pending()).toEqual([]);
    expect(q.pendingCount).toBe(0);
    q.add(e);
    expect(q.pending().map((d) => d.delta)).toEqual([1]);
  });

  test('the month turns at Istanbul midnight; the old month keeps its pending delta', () => {
    const q = new MonthlyQuota({ limit: 2, load: () => 0 });
    const nov = q.entry('a', null, Date.parse('2026-11-30T20:59:00Z'));
    q.add(nov);
    q.add(nov);
    expect(q.exhausted(nov)).toBe(true);
    const dec = q.entry('a', null, Date.parse('2026-11-30T21:00:00Z'));
    expect(dec).not.toBe(nov);
    expect(dec.period).toBe('2026-12');
    expect(q.exhausted(dec)).toBe(false);
    expect(q.period(Date.parse('2026-11-30T21:00:00Z')).end).toBe(Date.parse('2026-12-31T21:00:00Z'));
    expect(q.pending().map((d) => [d.entry.period, d.delta])).toEqual([['2026-11', 2]]);
  });

  test('idle subjects are evicted by generations; memory stays bounded over 1,000,000 clients', () => {
    let loads = 0;
    const q = new MonthlyQuota({ limit: 1000, load: () => (loads++, 0), generationMs: 60_000 });
    let max = 0;
    for (let i = 0; i < 1_000_000; i++) {
      const now = NOW + Math.floor(i / 100_000) * 60_000; // 100k new clients a minute
      const e = q.entry(`c${i}`, null, now);
      q.add(e);
      if (i % 10_000 === 0) {
        q.commit(q.pending());
        q.maintain(now);
        max = Math.max(max, q.size);
      }
    }
    expect(loads).toBe(1_000_000);
    expect(max).toBeLessThanOrEqual(300_000);
    expect(q.size).toBeLessThanOrEqual(300_000);
  });

  test('a full generation rotates early (hard bound within one generation)', () => {
    const q = new MonthlyQuota({ limit: 10, load: () => 0, maxEntries: 1000 });
    for (let i = 0; i < 100_000; i++) q.entry(`c${i}`, null, NOW);
    expect(q.size).toBeLessThanOrEqual(2000);
  });

  test('a failing read fails open on an uncached zero, and its delta is still written', () => {
    let down = true;
    const errors: unknown[] = [];
    const q = new MonthlyQuota({ limit: 10, load: () => (down ? (() => { throw new Error('closed'); })() : 7), onLoadError: (e) => errors.push(e) });
    const e = q.entry('a', null, NOW);
    expect(e.count).toBe(0);
    q.add(e);
    expect(errors).toHaveLength(1);
    expect(q.pending().map((d) => d.delta)).toEqual([1]);
    down = false;
    expect(q.entry('a', null, NOW).count).toBe(7); // not cached: read again once the database answers
  });
});

describe('write-behind to SQLite', () => {
  let db: TempDb;
  let clock: { now: number };
  let limits: Limits;
  const make = () =>
    new Limits({ sqlite: db.sqlite, rateLimitPerMinute: 60, freeMonthlyQuota: 1000, trustProxy: [], clock: () => clock.now, logger: silentLogger });
  const stored = (subject: string, period = '2026-11') =>
    (db.sqlite.query('SELECT count FROM quota_usage WHERE subject = ? AND period = ?').get(subject, period) as { count: number } | null)?.count ?? 0;

  beforeEach(() => {
    db = tempDb();
    clock = { now: NOW };
    limits = make();
    db.sqlite.run("INSERT INTO api_keys (id, hash, prefix, plan, name, created_at) VALUES ('key_AAAAAAAAAAAAAAAA', 'h', 'p', 'free', 'n', 1)");
  });
  afterEach(() => db.cleanup());

  function count(id: string, n: number, keyId: string | null = null) {
    for (let i = 0; i < n; i++) limits.quota.add(limits.quota.entry(id, keyId, clock.now));
  }

  test('flush adds deltas; a restarted process reads the total', () => {
    count('1.2.3.4', 3);
    expect(limits.flush()).toMatchObject({ ok: true, quotaRows: 1 });
    count('1.2.3.4', 2);
    limits.flush();
    expect(stored('ip:1.2.3.4')).toBe(5);
    expect(limits.flush()).toMatchObject({ ok: true, quotaRows: 0 });
    const again = make();
    expect(again.quota.entry('1.2.3.4', null, clock.now).count).toBe(5);
  });

  test('last-used times are written behind with the quota', () => {
    limits.keys.markUsed('key_AAAAAAAAAAAAAAAA', NOW + 5);
    limits.flush();
    expect(db.sqlite.query('SELECT last_used_at FROM api_keys').get()).toEqual({ last_used_at: NOW + 5 });
    limits.keys.markUsed('key_AAAAAAAAAAAAAAAA', NOW + 1); // never moves back
    limits.flush();
    expect(db.sqlite.query('SELECT last_used_at FROM api_keys').get()).toEqual({ last_used_at: NOW + 5 });
  });

  describe('while another connection holds the write lock (the scanner mid-scan)', () => {
    let writer: OpenedDb;
    beforeEach(() => {
      writer = openDatabase(db.path);
      writer.sqlite.run('BEGIN IMMEDIATE');
      writer.sqlite.run("INSERT INTO quota_usage (subject, period, count, updated_at) VALUES ('ip:9.9.9.9', '2026-11', 1, 1)");
    });
    afterEach(() => {
      if (writer.sqlite.inTransaction) writer.sqlite.run('ROLLBACK');
      writer.sqlite.close();
    });

    test('a flush neither blocks nor loses counts, and retries once the lock is free', () => {
      count('1.2.3.4', 4);
        limits.keys.markUsed('key_AAAAAAAAAAAAAAAA', NOW + 9);
      const t0 = performance.now();
      const r = limits.flush();
      const took = performance.now() - t0;
      expect(r).toMatchObject({ ok: false, busy: true, quotaRows: 1 });
      // The main connection's busy_timeout is 5000 ms; the flush must not have slept in it.
      expect(took).toBeLessThan(50);
      expect(db.sqlite.query('PRAGMA busy_timeout').get()).toEqual({ timeout: 5000 });
      // Reads on the main connection still work (WAL) and counting goes on in memory.
      expect(stored('ip:1.2.3.4')).toBe(0);
      count('1.2.3.4', 1);
      expect(limits.flush()).toMatchObject({ ok: false, busy: true });

      writer.sqlite.run('COMMIT');
      expect(limits.flush()).toMatchObject({ ok: true, quotaRows: 1, keyUses: 1 });
      expect(stored('ip:1.2.3.4')).toBe(5);
      expect(stored('ip:9.9.9.9')).toBe(1);
      expect(db.sqlite.query('SELECT last_used_at FROM api_keys').get()).toEqual({ last_used_at: NOW + 9 });
    });

    test('the lock is real: waiting for it would have blocked the event loop', () => {
      count('1.2.3.4', 1);
      const t0 = performance.now();
      expect(limits.flush(200).busy).toBe(true);
      expect(performance.now() - t0).toBeGreaterThanOrEqual(150);
    });

    test('a flush during a transaction held open across event-loop turns does not stall timers', async () => {
      count('1.2.3.4', 1);
      limits.start(10);
      let ticks = 0;
      let worst = 0;
      let last = performance.now();
      const probe = setInterval(() => {
        const t = performance.now();
        worst = Math.max(worst, t - last);
        last = t;
        ticks++;
      }, 5);
      await Bun.sleep(300);
      clearInterval(probe);
      limits.close(0); // stops the timer; final flush fails fast too
      expect(ticks).toBeGreaterThan(20);
      expect(worst).toBeLessThan(100);
      writer.sqlite.run('COMMIT');
      limits.flush();
      expect(stored('ip:1.2.3.4')).toBe(1);
    });
  });

  test('rate windows are saved at close and restored (then cleared) at start', () => {
    for (let i = 0; i < 7; i++) limits.rate.hit('1.2.3.4', clock.now);
    limits.close();
    expect(db.sqlite.query('SELECT bucket, current FROM rate_windows').all()).toEqual([{ bucket: '1.2.3.4', current: 7 }]);
    const again = make();
    expect(again.restoreWindows()).toBe(1);
    expect(again.rate.peek('1.2.3.4', clock.now + 1000)).toBe(53);
    expect(db.sqlite.query('SELECT count(*) AS n FROM rate_windows').get()).toEqual({ n: 0 });
  });
});

import { describe, expect, test } from 'bun:test';
import { OVERFLOW_BUCKET, SlidingWindowLimiter } from '../../src/limits/sliding-window.ts';

const MIN = 60_000;
const T0 = Date.parse('2026-11-21T10:00:00Z'); // aligned to a minute

function burst(l: SlidingWindowLimiter, bucket: string, n: number, now: number): number {
  let ok = 0;
  for (let i = 0; i < n; i++) if (l.hit(bucket, now) >= 0) ok++;
  return ok;
}

describe('SlidingWindowLimiter', () => {
  test('60 pass in a window, the 61st is refused, remaining counts down', () => {
    const l = new SlidingWindowLimiter({ limit: 60 });
    const seen: number[] = [];
    for (let i = 0; i < 60; i++) seen.push(l.hit('a', T0 + 1000 + i));
    expect(seen[0]).toBe(59);
    expect(seen[59]).toBe(0);
    expect(l.hit('a', T0 + 2000)).toBe(-1);
    expect(l.windowEnd).toBe(T0 + MIN);
    expect(l.hit('b', T0 + 2000)).toBe(59); // per bucket
  });

  test('refused requests are not counted', () => {
    const l = new SlidingWindowLimiter({ limit: 60 });
    expect(burst(l, 'a', 1000, T0 + 59_000)).toBe(60);
    // Next window, half-way: previous 60 weighs 30 → 30 more allowed. Had the 940 refusals
    // been counted, nothing would pass.
    expect(burst(l, 'a', 1000, T0 + MIN + 30_000)).toBe(30);
  });

  test('windows are aligned to wall-clock minutes', () => {
    const l = new SlidingWindowLimiter({ limit: 60 });
    l.hit('a', T0 + 42_123);
    expect(l.windowStart).toBe(T0);
    expect(l.windowEnd).toBe(T0 + MIN);
  });

  test('the previous window is weighted by the unelapsed fraction, rounded up', () => {
    const l = new SlidingWindowLimiter({ limit: 60 });
    expect(burst(l, 'a', 60, T0 + 50_000)).toBe(60);
    // At +15 s into the next window: ceil(60 × 45/60) = 45 used → 15 allowed.
    expect(l.peek('a', T0 + MIN + 15_000)).toBe(15);
    // At +1 ms: ceil(60 × 59.999/60) = 60 → none.
    expect(l.peek('a', T0 + MIN + 1)).toBe(0);
    // At +999 ms: 60 × 59.001/60 = 59.001 → rounded up to 60 → still none.
    expect(l.peek('a', T0 + MIN + 999)).toBe(0);
    // At +1000 ms: exactly 59 → one.
    expect(l.peek('a', T0 + MIN + 1000)).toBe(1);
  });

  test('a burst across the edge never gets a 61st request in any 60 s', () => {
    const l = new SlidingWindowLimiter({ limit: 60 });
    expect(burst(l, 'a', 100, T0 + MIN - 1)).toBe(60); // all at 00:59.999
    expect(burst(l, 'a', 100, T0 + MIN)).toBe(0); // 01:00.000
    expect(burst(l, 'a', 100, T0 + MIN + 500)).toBe(0); // ceil(59.5) = 60
    // Across the whole next window, at most one request per elapsed second comes free.
    let ok = 0;
    for (let ms = 0; ms < MIN; ms += 250) ok += burst(l, 'a', 5, T0 + MIN + ms);
    expect(ok).toBeLessThanOrEqual(60);
  });

  test('the window slides: after two idle windows everything is forgotten', () => {
    const l = new SlidingWindowLimiter({ limit: 3 });
    expect(burst(l, 'a', 5, T0)).toBe(3);
    expect(burst(l, 'a', 5, T0 + 2 * MIN)).toBe(3); // skipped a window: previous is empty
    expect(l.peek('a', T0 + 2 * MIN)).toBe(0);
  });

  test('idle buckets are evicted: 1,000,000 distinct buckets over 10 minutes stay bounded', () => {
    const l = new SlidingWindowLimiter({ limit: 60 });
    const perMinute = 100_000;
    let maxSize = 0;
    for (let i = 0; i < 1_000_000; i++) {
      const minute = Math.floor(i / perMinute);
      l.hit(`b${i}`, T0 + minute * MIN + (i % perMinute) / 2);
      if ((i & 1023) === 0) maxSize = Math.max(maxSize, l.size);
    }
    // Only the buckets of the current and previous minute are held.
    expect(maxSize).toBeLessThanOrEqual(2 * perMinute);
    expect(l.size).toBeLessThanOrEqual(2 * perMinute);
    l.hit('x', T0 + 20 * MIN);
    expect(l.size).toBe(1);
  });

  test('the per-window cap bounds memory even for 1,000,000 new buckets in one minute', () => {
    const l = new SlidingWindowLimiter({ limit: 60, maxBuckets: 10_000 });
    Bun.gc(true);
    const before = process.memoryUsage().heapUsed;
    for (let i = 0; i < 1_000_000; i++) l.hit(`2001:db8:${i.toString(16)}::/64`, T0 + 1000);
    expect(l.size).toBe(10_001); // the cap plus the shared overflow bucket
    Bun.gc(true);
    expect(process.memoryUsage().heapUsed - before).toBeLessThan(16 * 1024 * 1024);
    // Beyond the cap, new clients share one bucket: they are limited together.
    expect(l.peek(OVERFLOW_BUCKET, T0 + 1000)).toBe(0);
    expect(l.hit('brand-new', T0 + 1000)).toBe(-1);
    // Buckets already tracked are unaffected.
    expect(l.hit('2001:db8:0::/64', T0 + 1000)).toBe(58);
  });

  test('snapshot and restore (graceful stop, restart)', () => {
    const a = new SlidingWindowLimiter({ limit: 60 });
    burst(a, 'prev-only', 10, T0 + 10_000);
    burst(a, 'both', 20, T0 + 10_000);
    burst(a, 'both', 5, T0 + MIN + 5_000);
    burst(a, 'cur-only', 7, T0 + MIN + 5_000);
    const rows = a.snapshot();
    expect(rows).toHaveLength(3);

    // Restart in the same window: exactly as before.
    const b = new SlidingWindowLimiter({ limit: 60 });
    expect(b.restore(rows, T0 + MIN + 20_000)).toBe(3);
    for (const bucket of ['prev-only', 'both', 'cur-only']) expect(b.peek(bucket, T0 + MIN + 30_000)).toBe(a.peek(bucket, T0 + MIN + 30_000));

    // Restart in the next window: saved current becomes previous; saved previous is too old.
    const c = new SlidingWindowLimiter({ limit: 60 });
    expect(c.restore(rows, T0 + 2 * MIN + 30_000)).toBe(2);
    expect(c.peek('cur-only', T0 + 2 * MIN + 30_000)).toBe(60 - Math.ceil(7 / 2));
    expect(c.peek('prev-only', T0 + 2 * MIN + 30_000)).toBe(60);

    // Restart much later: nothing.
    const d = new SlidingWindowLimiter({ limit: 60 });
    expect(d.restore(rows, T0 + 10 * MIN)).toBe(0);
    expect(d.size).toBe(0);
  });

  test('a clock stepping back stays in the current window', () => {
    const l = new SlidingWindowLimiter({ limit: 2 });
    l.hit('a', T0 + MIN + 10);
    expect(l.hit('a', T0 + 10)).toBe(0);
    expect(l.hit('a', T0 + 10)).toBe(-1);
  });
});

/**
 * Per-bucket sliding-window counter (CONTRACT §4; unkey's and Cloudflare's algorithm): windows are
 * aligned to wall-clock multiples of `windowMs`; a request is allowed when
 *
 *   ceil(previous × (windowMs − elapsed) / windowMs) + current + 1 ≤ limit
 *
 * and only allowed requests are counted. Rounding the weighted previous window up means a burst
 * straddling the window edge never gets a 61st request.
 *
 * State is two Maps, bucket → count, for the current and the previous window. When the window
 * turns, the current map becomes the previous one and the old previous map is dropped whole, so
 * idle buckets are evicted in O(1) and memory holds only buckets seen in the last two windows.
 * A hard cap (`maxBuckets` per window) bounds memory whatever the number of distinct clients in
 * one window: beyond it, new buckets share one overflow bucket (they are limited together) rather
 * than growing the map.
 *
 * The hot path is two Map lookups, one Map set and arithmetic; nothing is allocated.
 */

export const OVERFLOW_BUCKET = '~overflow';

export interface WindowRow {
  bucket: string;
  windowStart: number;
  current: number;
  previous: number;
}

export interface SlidingWindowOptions {
  limit: number;
  windowMs?: number;
  /**
   * Distinct buckets tracked per window before new ones share the overflow bucket (default
   * 250,000: about 25 MB per window at ~100 bytes a bucket, so ~50 MB at worst for both).
   */
  maxBuckets?: number;
}

export class SlidingWindowLimiter {
  readonly limit: number;
  readonly windowMs: number;
  readonly maxBuckets: number;
  private cur = new Map<string, number>();
  private prev = new Map<string, number>();
  private start = 0;
  private end = 0;

  constructor(opts: SlidingWindowOptions) {
    if (!Number.isInteger(opts.limit) || opts.limit < 1) throw new Error('limit must be a positive integer');
    this.limit = opts.limit;
    this.windowMs = opts.windowMs ?? 60_000;
    this.maxBuckets = opts.maxBuckets ?? 250_000;
  }

  /** Start of the current window (epoch ms); valid after the first `hit`/`peek`/`advance`. */
  get windowStart(): number {
    return this.start;
  }

  /** End of the current window (epoch ms): X-RateLimit-Reset. */
  get windowEnd(): number {
    return this.end;
  }

  /** Buckets held in memory (current + previous window maps). */
  get size(): number {
    return this.cur.size + this.prev.size;
  }

  /** Moves to the window containing `now`; a clock that steps back keeps the current window. */
  advance(now: number): void {
    if (now < this.end) return;
    const start = now - (now % this.windowMs);
    if (start === this.end) {
      this.prev = this.cur;
      this.cur = new Map();
    } else {
      if (this.prev.size > 0) this.prev = new Map();
      if (this.cur.size > 0) this.cur = new Map();
    }
    this.start = start;
    this.end = start + this.windowMs;
  }

  /** Requests counted for a bucket in the window ending at `now`: current + rounded-up weighted previous. */
  private weighted(c: number, p: number | undefined, now: number): number {
    if (p === undefined) return c;
    const elapsed = now - this.start;
    const w = this.windowMs;
    return c + (elapsed <= 0 ? p : Math.ceil((p * (w - elapsed)) / w));
  }

  /**
   * Counts one request for `bucket` if it fits. Returns what is left after it (≥ 0), or -1 when
   * the request is refused (and not counted).
   */
  hit(bucket: string, now: number): number {
    if (now >= this.end) this.advance(now);
    let c = this.cur.get(bucket);
    let p = this.prev.size === 0 ? undefined : this.prev.get(bucket);
    if (c === undefined && p === undefined && this.cur.size >= this.maxBuckets) {
      bucket = OVERFLOW_BUCKET;
      c = this.cur.get(bucket);
      p = this.prev.get(bucket);
    }
    const used = this.weighted(c ?? 0, p, now);
    if (used >= this.limit) return -1;
    this.cur.set(bucket, (c ?? 0) + 1);
    return this.limit - used - 1;
  }

  /** What `bucket` has left, without counting anything. */
  peek(bucket: string, now: number): number {
    if (now >= this.end) this.advance(now);
    return Math.max(0, this.limit - this.weighted(this.cur.get(bucket) ?? 0, this.prev.get(bucket), now));
  }

  /** Every bucket with a count in the current or previous window, for saving at a graceful stop. */
  snapshot(): WindowRow[] {
    const rows: WindowRow[] = [];
    for (const [bucket, current] of this.cur) rows.push({ bucket, windowStart: this.start, current, previous: this.prev.get(bucket) ?? 0 });
    for (const [bucket, previous] of this.prev) if (!this.cur.has(bucket)) rows.push({ bucket, windowStart: this.start, current: 0, previous });
    return rows;
  }

  /**
   * Restores saved windows at start: rows of the current window come back as they were, rows of
   * the window just before become the previous window, older rows are ignored. Returns the
   * number of buckets restored.
   */
  restore(rows: readonly WindowRow[], now: number): number {
    this.advance(now);
    let n = 0;
    for (const r of rows) {
      if (r.windowStart === this.start) {
        if (r.current > 0) this.cur.set(r.bucket, (this.cur.get(r.bucket) ?? 0) + r.current);
        if (r.previous > 0) this.prev.set(r.bucket, (this.prev.get(r.bucket) ?? 0) + r.previous);
        n++;
      } else if (r.windowStart === this.start - this.windowMs && r.current > 0) {
        this.prev.set(r.bucket, (this.prev.get(r.bucket) ?? 0) + r.current);
        n++;
      }
    }
    return n;
  }
}

/**
 * Monthly quota of the Free plan (CONTRACT §4): one counter per subject — `ip:<bucket>` without a
 * key, `key:<id>` with a Free key — per calendar month in Europe/Istanbul.
 *
 * Counts live in memory on the hot path (a Map lookup and an increment) and are written behind
 * as deltas by the caller (`pending` → write → `commit`), so a failed write loses nothing: the
 * deltas stay pending and go out with the next flush. Because writes add deltas
 * (`count = count + excluded.count`), the stored total is right even if a subject was evicted
 * and reloaded before its last delta was written.
 *
 * A subject seen for the first time this month is read from the database once. Entries are kept
 * in two generations (hot, cold); `maintain` drops the cold one every `generationMs`, and a full
 * hot generation rotates early, so memory stays bounded by the clients of the last two
 * generations whatever the number of distinct clients in a month.
 */
import type { Access } from './access.ts';
import { istanbulMonth, type MonthPeriod } from './istanbul-month.ts';

export class QuotaEntry implements Access {
  readonly plan = 'free' as const;
  /** Unflushed delta is `count - flushed`. */
  flushed: number;
  dirty = false;
  constructor(
    readonly keyId: string | null,
    /** `ip:<bucket>` or `key:<id>`: the row's subject in quota_usage. */
    readonly subject: string,
    readonly period: string,
    public count: number,
  ) {
    this.flushed = count;
  }
}

export interface QuotaDelta {
  entry: QuotaEntry;
  delta: number;
}

export interface MonthlyQuotaOptions {
  limit: number;
  /** The stored count of a subject for a period (0 if none). May throw (database unavailable). */
  load: (subject: string, period: string) => number;
  periodOf?: (ms: number) => MonthPeriod;
  generationMs?: number;
  /**
   * Entries per generation before it rotates early (default 200,000: ~45 MB at ~220 bytes an
   * entry, ~90 MB at worst for both generations). Rotating early costs re-reads, never counts.
   */
  maxEntries?: number;
  /** Called when `load` throws; the request proceeds on an uncached zero count. */
  onLoadError?: (err: unknown) => void;
}

export class MonthlyQuota {
  readonly limit: number;
  private readonly load: MonthlyQuotaOptions['load'];
  private readonly periodOf: (ms: number) => MonthPeriod;
  private readonly generationMs: number;
  private readonly maxEntries: number;
  private readonly onLoadError: (err: unknown) => void;
  private current: MonthPeriod = { key: '', start: 0, end: 0 };
  private hot = new Map<string, QuotaEntry>();
  private cold = new Map<string, QuotaEntry>();
  private generationStart = 0;
  private dirty: QuotaEntry[] = [];

  constructor(opts: MonthlyQuotaOptions) {
    this.limit = opts.limit;
    this.load = opts.load;
    this.periodOf = opts.periodOf ?? istanbulMonth;
    this.generationMs = opts.generationMs ?? 10 * 60_000;
    this.maxEntries = opts.maxEntries ?? 200_000;
    this.onLoadError = opts.onLoadError ?? (() => {});
  }

  /** The month counted now; moves on when `now` passes its end. */
  period(now: number): MonthPeriod {
    if (now >= this.current.end) {
      this.current = this.periodOf(now);
      this.hot = new Map();
      this.cold = new Map();
      this.generationStart = now;
    }
    return this.current;
  }

  /**
   * The counter of a client bucket (`keyId` null) or of a Free key (`id` = key id). Key ids
   * start with `key_`, which no bucket does, so both share one map without prefixing per request.
   */
  entry(id: string, keyId: string | null, now: number): QuotaEntry {
    if (now >= this.current.end) this.period(now);
    const hit = this.hot.get(id);
    if (hit !== undefined) return hit;
    return this.miss(id, keyId);
  }

  private miss(id: string, keyId: string | null): QuotaEntry {
    let e = this.cold.get(id);
    if (e === undefined) {
      const subject = keyId === null ? `ip:${id}` : `key:${keyId}`;
      let stored: number;
      try {
        stored = this.load(subject, this.current.key);
      } catch (err) {
        // Fail open on an uncached zero: its delta is still written (added) once the database is back.
        this.onLoadError(err);
        return new QuotaEntry(keyId, subject, this.current.key, 0);
      }
      e = new QuotaEntry(keyId, subject, this.current.key, stored);
    } else this.cold.delete(id);
    if (this.hot.size >= this.maxEntries) this.rotate();
    this.hot.set(id, e);
    return e;
  }

  /** Counts one request answered 2xx. */
  add(e: QuotaEntry): void {
    e.count++;
    if (!e.dirty) {
      e.dirty = true;
      this.dirty.push(e);
    }
  }

  remaining(e: QuotaEntry): number {
    return e.count >= this.limit ? 0 : this.limit - e.count;
  }

  exhausted(e: QuotaEntry): boolean {
    return e.count >= this.limit;
  }

  /** Deltas not yet written. Nothing changes until `commit`. */
  pending(): QuotaDelta[] {
    const out: QuotaDelta[] = [];
    for (const entry of this.dirty) if (entry.count > entry.flushed) out.push({ entry, delta: entry.count - entry.flushed });
    return out;
  }

  /** Marks written deltas as flushed (call after the transaction committed). */
  commit(written: readonly QuotaDelta[]): void {
    for (const { entry, delta } of written) entry.flushed += delta;
    const still: QuotaEntry[] = [];
    for (const e of this.dirty) {
      if (e.count > e.flushed) still.push(e);
      else e.dirty = false;
    }
    this.dirty = still;
  }

  get pendingCount(): number {
    return this.dirty.length;
  }

  /** Generation upkeep; call about once a second (after a flush). */
  maintain(now: number): void {
    if (now >= this.current.end) this.period(now);
    if (now - this.generationStart >= this.generationMs) {
      this.rotate();
      this.generationStart = now;
    }
  }

  private rotate(): void {
    this.cold = this.hot;
    this.hot = new Map();
  }

  /** Entries held in memory (both generations). */
  get size(): number {
    return this.hot.size + this.cold.size;
  }
}

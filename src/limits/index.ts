/**
 * Rate limit, keys and monthly quotas, framework-free (CONTRACT §4). The HTTP gate
 * (src/http/plugins/limits.ts) asks this object, per request: which bucket is the client, is it
 * within its per-minute window, which key and plan, how much quota is left — all in memory.
 * SQLite is touched only on a subject's first sight this month, on a key cache miss (at most
 * once per key per `keyCacheTtlMs`), by the write-behind `flush` (about once a second), and at
 * start/stop for the per-IP windows.
 */
import type { Database } from 'bun:sqlite';
import type { Clock } from '../clock.ts';
import { isBusy } from '../db/client.ts';
import { KeyResolver } from '../keys/resolver.ts';
import { KeyStore } from '../keys/store.ts';
import { errorText, type Logger } from '../log.ts';
import { ClientIpResolver } from './client-ip.ts';
import type { MonthPeriod } from './istanbul-month.ts';
import { MonthlyQuota } from './quota.ts';
import { SlidingWindowLimiter } from './sliding-window.ts';
import { LimitsStore } from './store.ts';

export const FLUSH_INTERVAL_MS = 1_000;

export interface LimitsOptions {
  sqlite: Database;
  rateLimitPerMinute: number;
  freeMonthlyQuota: number;
  trustProxy: readonly string[];
  clock: Clock;
  logger: Logger;
  keyCacheTtlMs?: number;
  /** Per-window bucket cap of the rate limiter (memory bound). */
  maxBuckets?: number;
  periodOf?: (ms: number) => MonthPeriod;
}

export interface FlushResult {
  ok: boolean;
  /** The write lock was held elsewhere; everything stays pending for the next flush. */
  busy: boolean;
  quotaRows: number;
  keyUses: number;
}

export class Limits {
  readonly ip: ClientIpResolver;
  readonly rate: SlidingWindowLimiter;
  readonly quota: MonthlyQuota;
  readonly keys: KeyResolver;
  readonly clock: Clock;
  private readonly store: LimitsStore;
  private readonly logger: Logger;
  private timer: ReturnType<typeof setInterval> | null = null;
  private busySince: number | null = null;
  private lastLoadErrorLog = 0;

  constructor(opts: LimitsOptions) {
    this.clock = opts.clock;
    this.logger = opts.logger;
    this.store = new LimitsStore(opts.sqlite);
    const keyStore = new KeyStore(opts.sqlite);
    this.ip = new ClientIpResolver(opts.trustProxy);
    this.rate = new SlidingWindowLimiter({ limit: opts.rateLimitPerMinute, windowMs: 60_000, maxBuckets: opts.maxBuckets });
    this.quota = new MonthlyQuota({
      limit: opts.freeMonthlyQuota,
      load: (subject, period) => this.store.loadQuota(subject, period),
      periodOf: opts.periodOf,
      onLoadError: (err) => this.logLoadError(err),
    });
    this.keys = new KeyResolver({ lookup: (hash) => keyStore.findActiveByHash(hash), ttlMs: opts.keyCacheTtlMs });
  }

  private logLoadError(err: unknown): void {
    const now = this.clock();
    if (now - this.lastLoadErrorLog < 60_000) return;
    this.lastLoadErrorLog = now;
    this.logger.warn('quota read failed; counting from zero until the database answers', { error: errorText(err) });
  }

  /**
   * Writes pending quota deltas and key last-used times in one short transaction. With
   * `waitMs` 0 (the periodic flush) a write lock held by the scanner fails it at once instead of
   * blocking the event loop; the deltas are kept and retried next time.
   */
  flush(waitMs = 0): FlushResult {
    const now = this.clock();
    const deltas = this.quota.pending();
    const uses = this.keys.takeUsed();
    const result: FlushResult = { ok: true, busy: false, quotaRows: deltas.length, keyUses: uses.size };
    if (deltas.length > 0 || uses.size > 0) {
      try {
        this.store.writeBehind(deltas, uses, now, waitMs);
        this.quota.commit(deltas);
        if (this.busySince !== null) {
          this.logger.info('quota write-behind caught up', { waited_ms: now - this.busySince });
          this.busySince = null;
        }
      } catch (err) {
        this.keys.restoreUsed(uses);
        result.ok = false;
        result.busy = isBusy(err);
        if (!result.busy) this.logger.error('quota write-behind failed; will retry', { error: errorText(err), pending: deltas.length });
        else if (this.busySince === null) this.busySince = now;
        else if (now - this.busySince >= 30_000) {
          this.logger.warn('quota write-behind waiting for the write lock', { waiting_ms: now - this.busySince, pending: deltas.length });
          this.busySince = now;
        }
      }
    }
    this.quota.maintain(now);
    return result;
  }

  /** Restores the per-IP windows saved at the last graceful stop; returns how many buckets. */
  restoreWindows(waitMs = 5_000): number {
    return this.rate.restore(this.store.takeWindows(waitMs), this.clock());
  }

  /** Flushes every second until `close`. */
  start(intervalMs = FLUSH_INTERVAL_MS): void {
    if (this.timer !== null) return;
    this.timer = setInterval(() => this.flush(0), intervalMs);
  }

  /** Graceful stop: final flush (waiting for the lock this time) and the windows saved. */
  close(waitMs = 5_000): void {
    if (this.timer !== null) clearInterval(this.timer);
    this.timer = null;
    const r = this.flush(waitMs);
    if (!r.ok) this.logger.error('final quota flush failed', { pending: r.quotaRows });
    try {
      this.store.saveWindows(this.rate.snapshot(), waitMs);
    } catch (err) {
      this.logger.warn('could not save rate windows', { error: errorText(err) });
    }
  }
}

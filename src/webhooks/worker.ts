/**
 * The delivery worker: runs inside the server process, on the main thread, on its own connection
 * opened with busy_timeout 0. It never waits for a lock: a write that meets the scanner's open
 * transaction (SQLITE_BUSY) keeps its state in memory and is retried a moment later.
 *
 * All delivery state lives in SQLite (`webhook_deliveries`). The worker keeps, per endpoint, a
 * window of that endpoint's oldest pending deliveries in memory (in `change_seq` order) plus which
 * of them are in flight; results are written back in small batched transactions. After a crash
 * the rows of in-flight or unrecorded attempts are simply still `pending` and are sent again with
 * the same `webhook-id` (at-least-once). One worker per database file.
 *
 * Ordering (README): per endpoint, a change of an event is not attempted while an earlier change
 * of the same event for that endpoint is still pending; across events, deliveries start in change
 * order, at most `perEndpointConcurrency` at a time, and may overtake one that is retrying.
 */
import type { Database } from 'bun:sqlite';
import { systemClock, iso, type Clock } from '../clock.ts';
import { errorText, silentLogger, type Logger } from '../log.ts';
import { sqliteOf, stmt, writeTx, type DbHandle } from './db.ts';
import { fanOut, type FannedOut } from './fanout.ts';
import { DEFAULT_TIMEOUT_MS, DISABLE_AFTER_FAILING_MS, retryDelay } from './policy.ts';
import { sendAttempt, type AttemptOutcome } from './send.ts';
import { secretKey } from './signing.ts';
import type { LookupFn } from './ssrf.ts';

export interface WebhookWorkerDeps {
  /** A connection of its own, opened with `busyTimeoutMs: 0` (never a synchronous lock wait). */
  db: DbHandle;
  clock?: Clock;
  logger?: Logger;
  /** WEBHOOK_ALLOW_PRIVATE: skip the private/loopback address check. */
  allowPrivate?: boolean;
  /** Per attempt, response included. Default 15 s. */
  timeoutMs?: number;
  /** Attempts in flight across all endpoints. Default 32. */
  concurrency?: number;
  /** Attempts in flight per endpoint. Default 4. */
  perEndpointConcurrency?: number;
  /** Timer period: fan-out of changes committed elsewhere, due retries, endpoint changes from the CLI. Default 1 s. */
  tickMs?: number;
  /** DNS for the SSRF check; default `dns.promises.lookup(host, { all: true })`. */
  lookup?: LookupFn;
  /** Jitter source, [0, 1). */
  random?: () => number;
  /** Delivered / given-up rows are deleted after this long. Default 7 days. */
  retentionMs?: number;
  /** Wait before retrying a write that met SQLITE_BUSY. Default 25 ms. */
  busyRetryMs?: number;
  /** Pending deliveries per endpoint held in memory (the look-ahead). Default 256. */
  windowSize?: number;
  /**
   * Results are written after this delay, batched: a longer delay lets one page absorb more
   * updates (fewer WAL pages per delivery) at the price of more re-sends after a crash. Default 100 ms.
   */
  flushDelayMs?: number;
}

export interface WebhookWorker {
  /** New changes were committed (call after each scan commit): fan out and deliver now. */
  wake(): void;
  /** Stops picking work, waits for attempts in flight (bounded by the timeout), records them. */
  stop(): Promise<void>;
}

export interface WebhookWorkerControl extends WebhookWorker {
  /** Starts the timer (startWebhookWorker does this). */
  start(): void;
  /**
   * One synchronous round without timers, for tests and tools: fan out, start everything due now,
   * wait for it, record it; repeat until nothing is due. Returns the number of results it could
   * not write yet (another connection held the lock): they stay in memory for the next round.
   */
  drain(): Promise<{ attempts: number; unwritten: number }>;
  /** Writes buffered results now; false when the lock was busy (they stay buffered). */
  flush(): boolean;
  stats(): WorkerStats;
}

export interface WorkerStats {
  inFlight: number;
  endpoints: number;
  queued: number;
  unwritten: number;
  attempts: number;
  delivered: number;
}

interface Item {
  id: number;
  seq: number;
  eventId: string;
  msgId: string;
  attempts: number;
  nextAt: number;
  /** A Retry-After keeps the item waiting until then, even when the endpoint recovers. */
  holdUntil: number;
  /** Already brought forward once by a recovery: never again (a message that fails on its own keeps its schedule). */
  pulled: boolean;
  inflight: boolean;
}

interface EndpointState {
  id: string;
  url: string;
  key: Uint8Array;
  items: Item[];
  /** Highest change_seq loaded into `items` (rows above it are not in memory yet). */
  loadedUpTo: number;
  /** The last load returned fewer rows than asked: nothing more until a fan-out or tick. */
  exhausted: boolean;
  inflight: number;
  /** Last attempt failed: a success then brings the waiting retries forward. */
  failing: boolean;
  /** Needs a look in the next pump. */
  dirty: boolean;
  /** Nothing claimable before this time unless dirty. */
  wakeAt: number;
}

type Write =
  | { kind: 'delivered'; id: number; endpointId: string; attempts: number; at: number; status: number }
  | { kind: 'retry'; id: number; endpointId: string; attempts: number; at: number; status: number | null; error: string; nextAt: number }
  | { kind: 'failed'; id: number; endpointId: string; attempts: number; at: number; status: number | null; error: string }
  | { kind: 'gone'; id: number; endpointId: string; attempts: number; at: number; status: number };

const GONE_REASON = '410 Gone from receiver';

function isClosed(err: unknown): boolean {
  return err instanceof Error && /database (has|is) closed|closed database/i.test(err.message);
}
const HOUR = 3_600_000;
const MAX_WRITES_PER_TX = 1000;
/** ~20 MB of ~1 KB bodies at most. */
const BODY_CACHE_ENTRIES = 20_000;

export function createWebhookWorker(deps: WebhookWorkerDeps): WebhookWorkerControl {
  return new Worker(deps);
}

/** Creates the worker and starts its timer; the server calls `wake()` after each scan commit. */
export function startWebhookWorker(deps: WebhookWorkerDeps): WebhookWorker {
  const w = createWebhookWorker(deps);
  w.start();
  return { wake: () => w.wake(), stop: () => w.stop() };
}

class Worker implements WebhookWorkerControl {
  private readonly db: Database;
  private readonly clock: Clock;
  private readonly logger: Logger;
  private readonly allowPrivate: boolean;
  private readonly timeoutMs: number;
  private readonly concurrency: number;
  private readonly perEndpoint: number;
  private readonly tickMs: number;
  private readonly lookup: LookupFn | undefined;
  private readonly random: () => number;
  private readonly retentionMs: number;
  private readonly busyRetryMs: number;
  private readonly windowSize: number;
  private readonly flushDelayMs: number;

  private readonly endpoints = new Map<string, EndpointState>();
  /** Disabled by this worker but not yet written: a reload must not bring them back. */
  private readonly disabledLocally = new Set<string>();
  private readonly inflight = new Set<Promise<void>>();
  /**
   * Bodies of recently fanned-out changes by change_seq (one per change, shared by all endpoints:
   * the same bytes the rows hold), so a first attempt need not read its row's payload back.
   */
  private readonly bodies = new Map<number, string>();
  private writes: Write[] = [];
  private rr = 0;
  private loaded = false;
  private stopping = false;
  private timer: ReturnType<typeof setInterval> | null = null;
  private flushTimer: ReturnType<typeof setTimeout> | null = null;
  private pumpScheduled = false;
  private fanning: Promise<void> | null = null;
  private fanAgain = false;
  private lastPurge = 0;
  private lastWriteError = 0;
  private counters = { attempts: 0, delivered: 0 };

  constructor(deps: WebhookWorkerDeps) {
    this.db = sqliteOf(deps.db);
    this.clock = deps.clock ?? systemClock;
    this.logger = deps.logger ?? silentLogger;
    this.allowPrivate = deps.allowPrivate ?? false;
    this.timeoutMs = deps.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    this.concurrency = Math.max(1, deps.concurrency ?? 32);
    this.perEndpoint = Math.max(1, deps.perEndpointConcurrency ?? 4);
    this.tickMs = deps.tickMs ?? 1000;
    this.lookup = deps.lookup;
    this.random = deps.random ?? Math.random;
    this.retentionMs = deps.retentionMs ?? 7 * 24 * HOUR;
    this.busyRetryMs = deps.busyRetryMs ?? 25;
    this.windowSize = Math.max(this.perEndpoint, deps.windowSize ?? 256);
    this.flushDelayMs = deps.flushDelayMs ?? 100;
    const busy = this.db.query<{ timeout: number }, []>('PRAGMA busy_timeout').get()?.timeout ?? 0;
    if (busy > 0) this.logger.warn('webhook worker connection has a busy timeout: its writes may block the event loop; open it with busyTimeoutMs: 0', { busy_timeout_ms: busy });
  }

  start(): void {
    if (this.timer !== null || this.stopping) return;
    this.timer = setInterval(() => this.tick(), this.tickMs);
    this.wake();
  }

  wake(): void {
    if (this.stopping) return;
    void this.fanOutAndPump();
  }

  stats(): WorkerStats {
    let queued = 0;
    for (const ep of this.endpoints.values()) queued += ep.items.length;
    return { inFlight: this.inflight.size, endpoints: this.endpoints.size, queued, unwritten: this.writes.length, ...this.counters };
  }

  async stop(): Promise<void> {
    this.stopping = true;
    if (this.timer !== null) clearInterval(this.timer);
    this.timer = null;
    if (this.fanning !== null) await this.fanning;
    while (this.inflight.size > 0) await Promise.all([...this.inflight]);
    if (this.flushTimer !== null) clearTimeout(this.flushTimer);
    this.flushTimer = null;
    // Record what was attempted; if the lock stays busy past this, the rows are still pending and
    // will be sent again after the restart (same webhook-id).
    const deadline = Date.now() + 5000;
    while (!this.flush() && Date.now() < deadline) await Bun.sleep(this.busyRetryMs);
    if (this.writes.length > 0) this.logger.warn('webhook results not recorded at stop; they will be re-sent', { count: this.writes.length });
  }

  async drain(): Promise<{ attempts: number; unwritten: number }> {
    const before = this.counters.attempts;
    for (;;) {
      await this.fanOutNow();
      this.refreshAll();
      this.pump();
      if (this.inflight.size === 0) break;
      while (this.inflight.size > 0) await Promise.all([...this.inflight]);
    }
    this.flush();
    return { attempts: this.counters.attempts - before, unwritten: this.writes.length };
  }

  // ---- scheduling -------------------------------------------------------------------------

  private tick(): void {
    if (this.stopping) return;
    try {
      const now = this.clock();
      if (now - this.lastPurge >= HOUR) {
        this.lastPurge = now;
        this.purge(now);
      }
    } catch (err) {
      this.logger.error('webhook retention purge failed', { error: errorText(err) });
    }
    void this.fanOutAndPump();
  }

  private async fanOutAndPump(): Promise<void> {
    await this.fanOutNow();
    if (this.stopping) return;
    try {
      this.refreshAll();
      this.pump();
    } catch (err) {
      this.logger.error('webhook worker pump failed', { error: errorText(err) });
    }
  }

  /** One fan-out at a time; a wake during one runs another right after. */
  private fanOutNow(): Promise<void> {
    if (this.fanning !== null) {
      this.fanAgain = true;
      return this.fanning;
    }
    this.fanning = (async () => {
      try {
        do {
          this.fanAgain = false;
          const r = await fanOut(this.db, this.clock(), { onBody: (seq, body) => this.rememberBody(seq, body), onRows: (rows) => this.enqueue(rows) });
          if (r.busy) {
            // The scanner is committing; its wake() or the next tick brings us back.
            this.logger.debug('webhook fan-out deferred: database busy');
            break;
          }
        } while (this.fanAgain && !this.stopping);
      } catch (err) {
        this.logger.error('webhook fan-out failed', { error: errorText(err) });
      } finally {
        this.fanning = null;
      }
    })();
    return this.fanning;
  }

  private schedulePump(): void {
    if (this.pumpScheduled || this.stopping) return;
    this.pumpScheduled = true;
    setImmediate(() => {
      this.pumpScheduled = false;
      try {
        this.pump();
      } catch (err) {
        this.logger.error('webhook worker pump failed', { error: errorText(err) });
      }
    });
  }

  /** Stops everything at once, writing nothing (the connection is gone). */
  private halt(): void {
    if (!this.stopping) this.logger.error('webhook worker halted: its database connection is closed', { unwritten: this.writes.length });
    this.stopping = true;
    if (this.timer !== null) clearInterval(this.timer);
    this.timer = null;
    if (this.flushTimer !== null) clearTimeout(this.flushTimer);
    this.flushTimer = null;
    this.writes = [];
  }

  private scheduleFlush(delay = this.flushDelayMs): void {
    if (this.flushTimer !== null || (this.stopping && this.writes.length === 0)) return;
    this.flushTimer = setTimeout(() => {
      this.flushTimer = null;
      if (!this.flush() || this.writes.length > 0) this.scheduleFlush(this.busyRetryMs);
    }, delay);
  }

  // ---- endpoints and their windows ----------------------------------------------------------

  /** Endpoints from the database (the CLI adds and removes them), every window marked for a look. */
  private refreshAll(): void {
    const rows = stmt<{ id: string; url: string; secret: string; consecutive_failures: number }, []>(
      this.db,
      // Only endpoints of live Enterprise keys: a revoked key's subscriptions stop even if a
      // revocation ever left one marked active.
      "SELECT id, url, secret, consecutive_failures FROM webhook_endpoints WHERE status = 'active' AND key_id IN (SELECT id FROM api_keys WHERE revoked_at IS NULL AND plan = 'enterprise')",
    ).all();
    const active = new Set<string>();
    let firstPending: Map<string, number> | null = null;
    if (!this.loaded) {
      // Once at start: where each endpoint's pending rows begin, without walking delivered history.
      firstPending = new Map(
        stmt<{ endpoint_id: string; s: number }, []>(this.db, "SELECT endpoint_id, MIN(change_seq) AS s FROM webhook_deliveries WHERE status = 'pending' GROUP BY endpoint_id")
          .all()
          .map((r) => [r.endpoint_id, r.s]),
      );
      this.loaded = true;
    }
    for (const r of rows) {
      if (this.disabledLocally.has(r.id)) continue;
      active.add(r.id);
      const ep = this.endpoints.get(r.id);
      if (ep !== undefined) {
        ep.url = r.url;
        ep.exhausted = false;
        ep.dirty = true;
        continue;
      }
      let key: Uint8Array;
      try {
        key = secretKey(r.secret);
      } catch (err) {
        this.logger.error('webhook endpoint has an unusable secret; skipped', { endpoint_id: r.id, error: errorText(err) });
        continue;
      }
      // Where its pending rows begin. At start: just below the first pending one, or, with none,
      // the newest row (everything above it is fanned out from now on and arrives by enqueue or
      // refill). Endpoints added later have no history: from the beginning.
      let loadedUpTo = 0;
      if (firstPending !== null) {
        const first = firstPending.get(r.id);
        loadedUpTo =
          first !== undefined
            ? first - 1
            : (stmt<{ m: number | null }, [string]>(this.db, 'SELECT MAX(change_seq) AS m FROM webhook_deliveries WHERE endpoint_id = ?').get(r.id)?.m ?? 0);
      }
      this.endpoints.set(r.id, {
        id: r.id,
        url: r.url,
        key,
        items: [],
        loadedUpTo,
        exhausted: false,
        inflight: 0,
        failing: r.consecutive_failures > 0,
        dirty: true,
        wakeAt: 0,
      });
    }
    for (const id of this.endpoints.keys()) if (!active.has(id)) this.endpoints.delete(id);
  }

  /**
   * Rows the fan-out just committed go straight into the windows that hold every pending row of
   * their endpoint (no read-back); a window that is full, or not caught up, reads them later.
   */
  private enqueue(rows: FannedOut[]): void {
    let ep: EndpointState | undefined;
    let open = false;
    for (const r of rows) {
      if (ep?.id !== r.endpointId) {
        ep = this.endpoints.get(r.endpointId);
        open = ep !== undefined && ep.exhausted;
        if (ep !== undefined) ep.dirty = true;
      }
      if (ep === undefined || !open) continue;
      if (r.seq <= ep.loadedUpTo) continue;
      if (ep.items.length >= this.windowSize) {
        open = false;
        ep.exhausted = false;
        continue;
      }
      ep.items.push({ id: r.id, seq: r.seq, eventId: r.eventId, msgId: r.msgId, attempts: 0, nextAt: r.nextAt, holdUntil: 0, pulled: false, inflight: false });
      ep.loadedUpTo = r.seq;
    }
    // Endpoints the fan-out touched but that are not caught up read their rows on the next pump,
    // which runs between fan-out transactions: delivery starts before a large fan-out ends.
    for (const r of rows) {
      const e = this.endpoints.get(r.endpointId);
      if (e !== undefined && !e.exhausted) e.dirty = true;
    }
    this.schedulePump();
  }

  /** Tops the window up with the next pending rows, in change order. */
  private refill(ep: EndpointState): void {
    if (ep.exhausted || ep.items.length > this.windowSize / 2) return;
    const want = this.windowSize - ep.items.length;
    const rows = stmt<{ id: number; change_seq: number; event_id: string; msg_id: string; attempts: number; next_attempt_at: number }, [string, number, number]>(
      this.db,
      "SELECT id, change_seq, event_id, msg_id, attempts, next_attempt_at FROM webhook_deliveries WHERE endpoint_id = ? AND change_seq > ? AND status = 'pending' ORDER BY change_seq LIMIT ?",
    ).all(ep.id, ep.loadedUpTo, want);
    for (const r of rows) {
      ep.items.push({ id: r.id, seq: r.change_seq, eventId: r.event_id, msgId: r.msg_id, attempts: r.attempts, nextAt: r.next_attempt_at, holdUntil: 0, pulled: false, inflight: false });
      ep.loadedUpTo = r.change_seq;
    }
    if (rows.length < want) ep.exhausted = true;
  }

  // ---- picking and sending ------------------------------------------------------------------

  private pump(): void {
    if (this.stopping) return;
    const now = this.clock();
    const eps = [...this.endpoints.values()];
    if (eps.length === 0) return;
    const start = this.rr++ % eps.length;
    for (let k = 0; k < eps.length; k++) {
      const ep = eps[(start + k) % eps.length]!;
      if (this.inflight.size >= this.concurrency) {
        ep.dirty = true;
        continue;
      }
      if (!ep.dirty && now < ep.wakeAt && ep.exhausted) continue;
      this.refill(ep);
      ep.dirty = false;
      ep.wakeAt = Number.POSITIVE_INFINITY;
      if (ep.inflight >= this.perEndpoint) continue;
      // Walk in change order; an event with an earlier change still pending (in flight or waiting
      // for its retry) blocks its later changes.
      const blocked = new Set<string>();
      for (const item of ep.items) {
        if (blocked.has(item.eventId)) continue;
        blocked.add(item.eventId);
        if (item.inflight) continue;
        if (item.nextAt > now) {
          if (item.nextAt < ep.wakeAt) ep.wakeAt = item.nextAt;
          continue;
        }
        if (ep.inflight >= this.perEndpoint) break;
        if (this.inflight.size >= this.concurrency) {
          ep.dirty = true;
          break;
        }
        this.launch(ep, item);
      }
    }
  }

  private launch(ep: EndpointState, item: Item): void {
    item.inflight = true;
    ep.inflight++;
    const p = this.attempt(ep, item)
      .catch((err: unknown) => {
        // A read that failed (not the HTTP attempt, which reports as a value): try again in a second.
        item.nextAt = this.clock() + 1000;
        this.logger.error('webhook attempt could not start', { endpoint_id: ep.id, msg_id: item.msgId, error: errorText(err) });
      })
      .finally(() => {
        this.inflight.delete(p);
        item.inflight = false;
        ep.inflight--;
        ep.dirty = true;
        this.schedulePump();
      });
    this.inflight.add(p);
  }

  private async attempt(ep: EndpointState, item: Item): Promise<void> {
    let body = this.bodies.get(item.seq);
    if (body === undefined) {
      const row = stmt<{ payload: string; status: string }, [number]>(this.db, 'SELECT payload, status FROM webhook_deliveries WHERE id = ?').get(item.id);
      if (row === null || row.status !== 'pending') {
        // Removed by the CLI (or finished) behind our back: forget it.
        this.removeItem(ep, item);
        return;
      }
      body = row.payload;
    }
    const at = this.clock();
    let out: AttemptOutcome;
    try {
      out = await sendAttempt({
        url: ep.url,
        key: ep.key,
        msgId: item.msgId,
        body,
        now: at,
        timeoutMs: this.timeoutMs,
        allowPrivate: this.allowPrivate,
        ...(this.lookup ? { lookup: this.lookup } : {}),
      });
    } catch (err) {
      out = { ok: false, status: null, error: `internal error: ${errorText(err)}`, retryAfterMs: null, gone: false, refused: false, latencyMs: 0 };
    }
    this.counters.attempts++;
    item.attempts++;
    const base = { id: item.id, endpointId: ep.id, attempts: item.attempts, at };
    if (out.ok) {
      this.counters.delivered++;
      this.removeItem(ep, item);
      this.push({ kind: 'delivered', ...base, status: out.status! });
      if (ep.failing) {
        // The receiver is back: retries waiting on the schedule go now, once per delivery (a
        // Retry-After still holds). Without this a backlog behind a full window would wait for
        // the window's longest retry step after the receiver recovered.
        ep.failing = false;
        const now = this.clock();
        for (const other of ep.items) {
          if (!other.inflight && !other.pulled && other.nextAt > now && other.holdUntil <= now) {
            other.nextAt = now;
            other.pulled = true;
          }
        }
      }
      return;
    }
    ep.failing = true;
    this.logger.debug('webhook attempt failed', { endpoint_id: ep.id, msg_id: item.msgId, attempt: item.attempts, status: out.status, error: out.error });
    if (out.gone) {
      this.removeItem(ep, item);
      this.push({ kind: 'gone', ...base, status: 410 });
      this.disableLocally(ep.id);
      this.logger.warn('webhook endpoint disabled', { endpoint_id: ep.id, reason: GONE_REASON });
      return;
    }
    const delay = retryDelay(item.attempts, this.random, out.retryAfterMs);
    const error = out.error ?? 'failed';
    if (delay === null) {
      this.removeItem(ep, item);
      this.push({ kind: 'failed', ...base, status: out.status, error });
      this.logger.info('webhook delivery given up', { endpoint_id: ep.id, msg_id: item.msgId, attempts: item.attempts, error });
      return;
    }
    item.nextAt = at + delay;
    item.holdUntil = out.retryAfterMs !== null ? item.nextAt : 0;
    this.push({ kind: 'retry', ...base, status: out.status, error, nextAt: item.nextAt });
  }

  private rememberBody(seq: number, body: string): void {
    this.bodies.set(seq, body);
    if (this.bodies.size > BODY_CACHE_ENTRIES) {
      const oldest = this.bodies.keys().next().value;
      if (oldest !== undefined) this.bodies.delete(oldest);
    }
  }

  private removeItem(ep: EndpointState, item: Item): void {
    const i = ep.items.indexOf(item);
    if (i !== -1) ep.items.splice(i, 1);
  }

  private disableLocally(id: string): void {
    this.disabledLocally.add(id);
    this.endpoints.delete(id);
  }

  private push(w: Write): void {
    this.writes.push(w);
    if (this.writes.length >= MAX_WRITES_PER_TX) {
      if (this.flushTimer !== null) clearTimeout(this.flushTimer);
      this.flushTimer = null;
      if (!this.flush() || this.writes.length > 0) this.scheduleFlush(this.busyRetryMs);
    } else this.scheduleFlush();
  }

  // ---- recording ----------------------------------------------------------------------------

  /** Writes buffered results in order, in transactions of at most MAX_WRITES_PER_TX. */
  flush(): boolean {
    while (this.writes.length > 0) {
      const batch = this.writes.slice(0, MAX_WRITES_PER_TX);
      let disabled: { id: string; reason: string }[] = [];
      let tx;
      try {
        tx = writeTx(this.db, () => {
          disabled = this.apply(batch);
        });
      } catch (err) {
        if (isClosed(err)) {
          // The owner closed our connection without stop(): nothing can be written any more. The
          // rows are still pending, so the next worker sends them again (same webhook-id).
          this.halt();
          return false;
        }
        // Not a lock: log (at most once a minute) and keep the results for the next try.
        if (Date.now() - this.lastWriteError > 60_000) {
          this.lastWriteError = Date.now();
          this.logger.error('webhook results not written; retrying', { error: errorText(err), count: batch.length });
        }
        return false;
      }
      if (tx.busy) return false;
      this.writes = this.writes.slice(batch.length);
      for (const d of disabled) {
        this.disabledLocally.delete(d.id);
        this.endpoints.delete(d.id);
        if (d.reason !== GONE_REASON) this.logger.warn('webhook endpoint disabled', { endpoint_id: d.id, reason: d.reason });
      }
      // Once written, the database says 'disabled'; the local mark is no longer needed.
      for (const w of batch) if (w.kind === 'gone') this.disabledLocally.delete(w.endpointId);
    }
    return true;
  }

  private apply(batch: Write[]): { id: string; reason: string }[] {
    const db = this.db;
    const delivered = stmt<unknown, [number, number, number, number, number]>(
      db,
      "UPDATE webhook_deliveries SET status = 'delivered', attempts = ?, last_attempt_at = ?, last_status = ?, last_error = NULL, delivered_at = ?, payload = '' WHERE id = ? AND status != 'delivered'",
    );
    const retry = stmt<unknown, [number, number, number | null, string, number, number]>(
      db,
      "UPDATE webhook_deliveries SET attempts = ?, last_attempt_at = ?, last_status = ?, last_error = ?, next_attempt_at = ? WHERE id = ? AND status = 'pending'",
    );
    const failed = stmt<unknown, [number, number, number | null, string, number]>(
      db,
      "UPDATE webhook_deliveries SET status = 'failed', attempts = ?, last_attempt_at = ?, last_status = ?, last_error = ? WHERE id = ? AND status = 'pending'",
    );
    const epSuccess = stmt<unknown, [number, string]>(db, 'UPDATE webhook_endpoints SET last_success_at = ?, consecutive_failures = 0, failing_since = NULL WHERE id = ?');
    const epFailure = stmt<unknown, [number, number, string]>(
      db,
      'UPDATE webhook_endpoints SET last_failure_at = ?, consecutive_failures = consecutive_failures + 1, failing_since = COALESCE(failing_since, ?) WHERE id = ?',
    );
    const epDisable = stmt<unknown, [string, number, string]>(db, "UPDATE webhook_endpoints SET status = 'disabled', disabled_reason = ?, disabled_at = ? WHERE id = ? AND status = 'active'");
    const epFailingSince = stmt<{ failing_since: number | null; status: string }, [string]>(db, 'SELECT failing_since, status FROM webhook_endpoints WHERE id = ?');
    const stopPending = stmt<unknown, [string, string]>(db, "UPDATE webhook_deliveries SET status = 'failed', last_error = ? WHERE endpoint_id = ? AND status = 'pending'");

    const disabled: { id: string; reason: string }[] = [];
    const disable = (endpointId: string, reason: string, at: number) => {
      if (epDisable.run(reason, at, endpointId).changes === 0) return;
      stopPending.run(`endpoint disabled: ${reason}`, endpointId);
      disabled.push({ id: endpointId, reason });
    };
    // An endpoint's successes are folded into one update, written before its next failure (order
    // matters: success then failure = 1 consecutive failure) or at the end of the batch.
    const successAt = new Map<string, number>();
    const settle = (endpointId: string) => {
      const t = successAt.get(endpointId);
      if (t === undefined) return;
      epSuccess.run(t, endpointId);
      successAt.delete(endpointId);
    };
    for (const w of batch) {
      if (w.kind === 'delivered') {
        delivered.run(w.attempts, w.at, w.status, w.at, w.id);
        successAt.set(w.endpointId, Math.max(w.at, successAt.get(w.endpointId) ?? 0));
        continue;
      }
      settle(w.endpointId);
      if (w.kind === 'retry') retry.run(w.attempts, w.at, w.status, w.error, w.nextAt, w.id);
      else if (w.kind === 'failed') failed.run(w.attempts, w.at, w.status, w.error, w.id);
      else failed.run(w.attempts, w.at, w.status, `HTTP 410: ${GONE_REASON}`, w.id);
      epFailure.run(w.at, w.at, w.endpointId);
      if (w.kind === 'gone') disable(w.endpointId, GONE_REASON, w.at);
      else {
        const ep = epFailingSince.get(w.endpointId);
        if (ep?.status === 'active' && ep.failing_since !== null && w.at - ep.failing_since >= DISABLE_AFTER_FAILING_MS) {
          disable(w.endpointId, `failing without a success for 5 days (since ${iso(ep.failing_since)})`, w.at);
        }
      }
    }
    for (const id of [...successAt.keys()]) settle(id);
    return disabled;
  }

  /** Deletes finished deliveries older than the retention, in short chunks. */
  private purge(now: number): void {
    const cutoff = now - this.retentionMs;
    const del = stmt<unknown, [number]>(
      this.db,
      "DELETE FROM webhook_deliveries WHERE id IN (SELECT id FROM webhook_deliveries WHERE status IN ('delivered', 'failed') AND next_attempt_at < ? LIMIT 2000)",
    );
    for (let i = 0; i < 50; i++) {
      const tx = writeTx(this.db, () => del.run(cutoff).changes);
      if (tx.busy || tx.value === 0) return;
    }
  }
}

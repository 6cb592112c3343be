/**
 * The request policy the three HTTP adapters share: a concurrency limit on in-flight requests, the
 * source-wide back-off, and the translation of fetch failures into cell failures.
 */
import type { NormalizedItem, SourceName } from '../../domain/event.ts';
import { SourceBackoff } from './backoff.ts';
import { fetchJson, type FetchJsonFailure, type SleepFn } from './http.ts';
import type { CellFailureKind, CellResult, SourceStatus } from './source.ts';
import { createLimiter, isRecord, type JsonRecord, type Limiter } from './util.ts';

/** What every HTTP adapter needs from its environment. */
export interface HttpSourceDeps {
  /** Clock for the back-off (epoch ms). */
  now: () => number;
  /** Per-request timeout. */
  timeoutMs: number;
  /** Sleep between a failed attempt and its retry (tests pass a no-op). */
  sleep: SleepFn;
  /** 0 ≤ x < 1, for the retry jitter. */
  random: () => number;
}

export interface BlockPolicy {
  /** Statuses that open the back-off. */
  statuses: readonly number[];
  /** Whether a 2xx HTML page (a bot wall) opens the back-off. */
  htmlIsBlock: boolean;
  baseMs: number;
  maxMs: number;
  /** Use the answer's `Retry-After` (clamped to maxMs) instead of the exponential period. */
  honourRetryAfter: boolean;
  /** The human reason shown by `status()`. */
  describe: (failure: FetchJsonFailure) => string;
}

export interface CoreFailure {
  ok: false;
  kind: CellFailureKind;
  error: string;
  requests: number;
}

export type CoreResult = { ok: true; body: JsonRecord; requests: number } | CoreFailure;

/** How the upstreams are named in errors. */
const LABELS: Readonly<Record<SourceName, string>> = { waze: 'Waze', tomtom: 'TomTom', here: 'HERE', replay: 'Replay' };

/**
 * Consecutive connection failures or timeouts after which the upstream counts as unreachable and
 * the source backs off: without it every one of the 220 cells paid a connection attempt and a
 * jittered retry (about 80 s per scan against a closed port).
 */
export const UNREACHABLE_AFTER = 8;

export class HttpSourceCore {
  readonly backoff: SourceBackoff;
  private readonly limiter: Limiter;
  private unreachable = 0;

  constructor(
    readonly name: SourceName,
    private readonly deps: HttpSourceDeps,
    private readonly policy: BlockPolicy,
    concurrency: number,
    private readonly headers: Record<string, string>,
    private readonly secrets: readonly string[] = [],
  ) {
    this.backoff = new SourceBackoff({ now: deps.now, baseMs: policy.baseMs, maxMs: policy.maxMs });
    this.limiter = createLimiter(concurrency);
  }

  /** Requests in flight right now. */
  get inFlight(): number {
    return this.limiter.active;
  }

  backoffFailure(requests = 0): CoreFailure {
    const s = this.backoff.state();
    const until = s.until === null ? 'later' : new Date(s.until).toISOString();
    return {
      ok: false,
      kind: 'backoff',
      error: `${this.name} is backing off until ${until}${s.reason ? ` (${s.reason})` : ''}`,
      requests,
    };
  }

  /** One JSON GET under the source's policy, answered by a JSON object. Never throws for upstream trouble. */
  async get(url: URL, signal?: AbortSignal): Promise<CoreResult> {
    if (this.backoff.isOpen()) return this.backoffFailure();
    return this.limiter.run(async () => {
      // The breaker may have opened while this request waited for a slot.
      if (this.backoff.isOpen()) return this.backoffFailure();
      const r = await fetchJson(url, {
        timeoutMs: this.deps.timeoutMs,
        signal,
        headers: this.headers,
        blockStatuses: this.policy.statuses,
        htmlKind: this.policy.htmlIsBlock ? 'blocked' : 'parse',
        sleep: this.deps.sleep,
        random: this.deps.random,
        now: this.deps.now,
        secrets: this.secrets,
      });
      if (r.ok) {
        this.unreachable = 0;
        this.backoff.succeed();
        // Every upstream answers a JSON object; anything else is a parse failure of the cell.
        if (!isRecord(r.body)) return { ok: false, kind: 'parse', error: `${LABELS[this.name]} answered JSON that is not an object`, requests: r.requests };
        return { ok: true, body: r.body, requests: r.requests };
      }
      if ((r.kind === 'network' || r.kind === 'timeout') && !signal?.aborted) {
        if (++this.unreachable >= UNREACHABLE_AFTER) {
          this.unreachable = 0;
          const until = this.backoff.trip(`unreachable: ${r.error}`, null);
          return { ok: false, kind: r.kind, error: `${r.error}; ${this.name} backs off until ${new Date(until).toISOString()}`, requests: r.requests };
        }
      } else this.unreachable = 0;
      if (r.kind === 'blocked') {
        const until = this.backoff.trip(
          this.policy.describe(r),
          this.policy.honourRetryAfter ? r.retryAfterMs : null,
        );
        return {
          ok: false,
          kind: 'blocked',
          error: `${r.error}; ${this.name} backs off until ${new Date(until).toISOString()}`,
          requests: r.requests,
        };
      }
      return { ok: false, kind: r.kind, error: r.error, requests: r.requests };
    });
  }

  /** A whole cell in one GET, its answer parsed into items (sources that never subdivide). */
  async getItems(url: URL, parse: (body: JsonRecord) => NormalizedItem[], signal?: AbortSignal): Promise<CellResult> {
    const r = await this.get(url, signal);
    if (!r.ok) return r;
    return { ok: true, items: parse(r.body), requests: r.requests };
  }

  status(): SourceStatus {
    return { name: this.name, ...this.backoff.state() };
  }
}

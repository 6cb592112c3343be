/**
 * A source-wide circuit breaker. An upstream block signal (Waze 403 or an HTML bot wall, TomTom
 * 403, HERE 429/503) opens it for an exponentially growing period; while it is open the source
 * makes no request at all. When the period has passed, requests flow again (they are the probe):
 * the next success closes it and resets the exponent, another block re-opens it for twice as long.
 */

export interface BackoffOptions {
  now: () => number;
  /** First period. */
  baseMs: number;
  /** Cap for the exponential period and for a server-requested `Retry-After`. */
  maxMs: number;
  /** Growth per consecutive block; default 2. */
  factor?: number;
  /** The shortest period a `Retry-After` can ask for; default 1 s. */
  minRetryAfterMs?: number;
}

export interface BackoffState {
  state: 'ok' | 'backing_off';
  /** Epoch ms, null when not backing off. */
  until: number | null;
  reason: string | null;
}

export class SourceBackoff {
  private openUntil: number | null = null;
  private openReason: string | null = null;
  /** Consecutive block signals since the last success. */
  private strikes = 0;

  constructor(private readonly options: BackoffOptions) {}

  /** True while requests must not be made. */
  isOpen(): boolean {
    return this.openUntil !== null && this.options.now() < this.openUntil;
  }

  /** Consecutive blocks since the last success. */
  get consecutiveBlocks(): number {
    return this.strikes;
  }

  /**
   * Record a block signal and open the breaker. `retryAfterMs` (a server's `Retry-After`) replaces
   * the exponential period when given, clamped to [minRetryAfterMs, maxMs]. A signal that arrives
   * while already open (another in-flight request of the same burst) does not grow the exponent;
   * it can only extend the period. Returns the epoch ms the breaker stays open until.
   */
  trip(reason: string, retryAfterMs: number | null = null): number {
    const now = this.options.now();
    const alreadyOpen = this.isOpen();
    let periodMs: number;
    if (retryAfterMs !== null && Number.isFinite(retryAfterMs)) {
      periodMs = Math.min(this.options.maxMs, Math.max(this.options.minRetryAfterMs ?? 1000, retryAfterMs));
    } else {
      const exponent = alreadyOpen ? Math.max(0, this.strikes - 1) : this.strikes;
      periodMs = Math.min(this.options.maxMs, this.options.baseMs * (this.options.factor ?? 2) ** exponent);
    }
    if (!alreadyOpen) this.strikes++;
    const until = now + periodMs;
    this.openUntil = alreadyOpen && this.openUntil !== null ? Math.max(this.openUntil, until) : until;
    this.openReason = reason;
    return this.openUntil;
  }

  /** A good answer: close the breaker and reset the exponent. */
  succeed(): void {
    this.strikes = 0;
    this.openUntil = null;
    this.openReason = null;
  }

  state(): BackoffState {
    if (this.isOpen()) return { state: 'backing_off', until: this.openUntil, reason: this.openReason };
    return { state: 'ok', until: null, reason: null };
  }
}

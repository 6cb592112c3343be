/**
 * Presented key → plan, for the request path. A key the CLI creates or revokes while the server
 * runs is seen within `ttlMs` (default 2 s): each distinct key string is looked up by hash at most
 * once per TTL, so a busy key costs one Map lookup per request and one indexed SELECT every two
 * seconds; unknown keys are cached too (negative caching), so replaying a bad key never reaches
 * the database more often. Last-used times are collected here and written behind by the caller.
 */
import { hashApiKey, isWellFormedKey } from './format.ts';
import type { ActiveKey } from './store.ts';

export const KEY_CACHE_TTL_MS = 2_000;

interface CacheEntry {
  hash: string;
  key: ActiveKey | null;
  expiresAt: number;
}

export interface KeyResolverOptions {
  /** Active key by hash, or null (unknown or revoked). May throw when the database is down. */
  lookup: (hash: string) => ActiveKey | null;
  ttlMs?: number;
  /** Distinct key strings cached at once; the oldest is dropped beyond it. */
  maxEntries?: number;
}

export class KeyResolver {
  readonly ttlMs: number;
  private readonly maxEntries: number;
  private readonly lookup: (hash: string) => ActiveKey | null;
  private readonly cache = new Map<string, CacheEntry>();
  private used = new Map<string, number>();

  constructor(opts: KeyResolverOptions) {
    this.lookup = opts.lookup;
    this.ttlMs = opts.ttlMs ?? KEY_CACHE_TTL_MS;
    this.maxEntries = opts.maxEntries ?? 10_000;
  }

  /**
   * The active key for a presented string, or null if it is malformed, unknown or revoked.
   * Throws only if the lookup itself fails (database unavailable) and nothing usable is cached.
   */
  resolve(presented: string, now: number): ActiveKey | null {
    const hit = this.cache.get(presented);
    if (hit !== undefined && hit.expiresAt > now) return hit.key;
    if (hit === undefined && !isWellFormedKey(presented)) return null;
    const hash = hit?.hash ?? hashApiKey(presented);
    const key = this.lookup(hash);
    if (hit !== undefined) {
      hit.key = key;
      hit.expiresAt = now + this.ttlMs;
    } else {
      if (this.cache.size >= this.maxEntries) this.cache.delete(this.cache.keys().next().value!);
      this.cache.set(presented, { hash, key, expiresAt: now + this.ttlMs });
    }
    return key;
  }

  /** Notes a use; `takeUsed` hands the latest time per key to the write-behind. */
  markUsed(id: string, now: number): void {
    this.used.set(id, now);
  }

  takeUsed(): Map<string, number> {
    const out = this.used;
    this.used = new Map();
    return out;
  }

  /** Puts back uses a failed write could not store (keeping any newer ones). */
  restoreUsed(uses: Map<string, number>): void {
    for (const [id, at] of uses) if ((this.used.get(id) ?? 0) < at) this.used.set(id, at);
  }

  get size(): number {
    return this.cache.size;
  }
}

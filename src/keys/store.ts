/**
 * The `api_keys` table: created, listed and revoked by the CLI (`trafik keys …`), looked up by
 * hash by the server. Plain prepared statements on a bun:sqlite connection; both sides may run at
 * once on the same file (WAL).
 */
import type { Database, Statement } from 'bun:sqlite';
import type { Plan } from '../db/schema/limits.ts';
import type { Access } from '../limits/access.ts';
import { displayPrefix, generateApiKey, hashApiKey, newKeyId } from './format.ts';

export const PLANS: readonly Plan[] = ['free', 'enterprise'];

export interface ApiKeyRecord {
  id: string;
  prefix: string;
  plan: Plan;
  name: string;
  createdAt: number;
  lastUsedAt: number | null;
  revokedAt: number | null;
}

/** What the server needs to know about a presented key; it doubles as the request's Access. */
export interface ActiveKey extends Access {
  readonly id: string;
  readonly keyId: string;
}

interface Row {
  id: string;
  prefix: string;
  plan: Plan;
  name: string;
  created_at: number;
  last_used_at: number | null;
  revoked_at: number | null;
}

const COLUMNS = 'id, prefix, plan, name, created_at, last_used_at, revoked_at';

function toRecord(r: Row): ApiKeyRecord {
  return { id: r.id, prefix: r.prefix, plan: r.plan, name: r.name, createdAt: r.created_at, lastUsedAt: r.last_used_at, revokedAt: r.revoked_at };
}

export class KeyStore {
  private readonly byHash: Statement<ActiveKey, [string]>;

  constructor(private readonly db: Database) {
    this.byHash = db.query('SELECT id, id AS keyId, plan FROM api_keys WHERE hash = ? AND revoked_at IS NULL');
  }

  /** A new key; the returned `key` is the only time it exists outside the caller's hands. */
  create(input: { plan: Plan; name: string; now: number }): { key: string; record: ApiKeyRecord } {
    const key = generateApiKey();
    const record: ApiKeyRecord = { id: newKeyId(), prefix: displayPrefix(key), plan: input.plan, name: input.name, createdAt: input.now, lastUsedAt: null, revokedAt: null };
    this.db
      .query('INSERT INTO api_keys (id, hash, prefix, plan, name, created_at) VALUES (?, ?, ?, ?, ?, ?)')
      .run(record.id, hashApiKey(key), record.prefix, record.plan, record.name, record.createdAt);
    return { key, record };
  }

  list(): ApiKeyRecord[] {
    return this.db.query<Row, []>(`SELECT ${COLUMNS} FROM api_keys ORDER BY created_at, id`).all().map(toRecord);
  }

  get(id: string): ApiKeyRecord | null {
    const r = this.db.query<Row, [string]>(`SELECT ${COLUMNS} FROM api_keys WHERE id = ?`).get(id);
    return r === null ? null : toRecord(r);
  }

  /** Revokes a key (idempotent: an already revoked key keeps its first revocation time). */
  revoke(id: string, now: number): { record: ApiKeyRecord; already: boolean } | null {
    const before = this.get(id);
    if (before === null) return null;
    if (before.revokedAt !== null) return { record: before, already: true };
    // Its webhook subscriptions stop with it, in the same transaction: nothing more is fanned out
    // to them, and what was still to be sent is given up.
    this.db.transaction(() => {
      this.db.query('UPDATE api_keys SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL').run(now, id);
      this.db
        .query(
          "UPDATE webhook_deliveries SET status = 'failed', last_error = 'endpoint disabled: API key revoked' WHERE status = 'pending' AND endpoint_id IN (SELECT id FROM webhook_endpoints WHERE key_id = ?)",
        )
        .run(id);
      this.db
        .query("UPDATE webhook_endpoints SET status = 'disabled', disabled_reason = 'API key revoked', disabled_at = ? WHERE key_id = ? AND status = 'active'")
        .run(now, id);
    }).immediate();
    return { record: this.get(id)!, already: false };
  }

  /** Whether a key id is still a live Enterprise key (open live streams re-check this). */
  isActiveEnterprise(id: string): boolean {
    return this.db.query<{ ok: number }, [string]>("SELECT 1 AS ok FROM api_keys WHERE id = ? AND revoked_at IS NULL AND plan = 'enterprise'").get(id) !== null;
  }

  /** The server's lookup: an active (not revoked) key by the SHA-256 hex of the presented key. */
  findActiveByHash(hash: string): ActiveKey | null {
    return this.byHash.get(hash);
  }
}

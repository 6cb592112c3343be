/**
 * Webhook subscriptions (`webhook_endpoints`): added, listed, removed by the CLI and listed
 * read-only by `GET /api/v1/webhooks`. Plain prepared statements; the CLI and a running server
 * may work on the file at once (WAL).
 */
import type { Database } from 'bun:sqlite';
import { randomBase62 } from '../keys/format.ts';
import { iso } from '../clock.ts';
import { EVENT_TYPES, type CityRef, type EventType } from '../domain/event.ts';
import type { EndpointStatus } from '../db/schema/webhooks.ts';
import { provinceByPlate, resolveCity, suggestCities } from '../provinces/index.ts';
import { sqliteOf, stmt, type DbHandle } from './db.ts';
import { generateSecret } from './signing.ts';
import { checkWebhookUrl, type LookupFn } from './ssrf.ts';

export const ENDPOINT_ID_PATTERN = /^whk_[0-9A-Za-z]{20}$/;

export function newEndpointId(): string {
  return `whk_${randomBase62(20)}`;
}

/** Bad input from the operator: one line, shown as is. */
export class WebhookInputError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'WebhookInputError';
  }
}

/** What `GET /api/v1/webhooks` and `trafik webhooks list` show. Never the secret. */
export interface WebhookSubscriptionView {
  id: string;
  url: string;
  filters: { types: EventType[] | null; cities: CityRef[] | null };
  status: EndpointStatus;
  disabled_reason: string | null;
  disabled_at: string | null;
  created_at: string;
  last_success_at: string | null;
  last_failure_at: string | null;
  consecutive_failures: number;
  /** Start of the current run of failures (5 days of it disable the endpoint); null when healthy. */
  failing_since: string | null;
  /** Deliveries still to be sent or retried. */
  pending_deliveries: number;
  /** Delivered / given-up deliveries still on record (finished ones are kept 7 days by default). */
  delivered_count: number;
  failed_count: number;
}

export interface EndpointRecord {
  id: string;
  keyId: string;
  url: string;
  secret: string;
  types: EventType[] | null;
  cities: number[] | null;
  status: EndpointStatus;
  disabledReason: string | null;
  disabledAt: number | null;
  createdAt: number;
  lastSuccessAt: number | null;
  lastFailureAt: number | null;
  consecutiveFailures: number;
  failingSince: number | null;
  cursorSeq: number;
}

interface Row {
  id: string;
  key_id: string;
  url: string;
  secret: string;
  types: string | null;
  cities: string | null;
  status: EndpointStatus;
  disabled_reason: string | null;
  disabled_at: number | null;
  created_at: number;
  last_success_at: number | null;
  last_failure_at: number | null;
  consecutive_failures: number;
  failing_since: number | null;
  cursor_seq: number;
}

const COLUMNS =
  'id, key_id, url, secret, types, cities, status, disabled_reason, disabled_at, created_at, last_success_at, last_failure_at, consecutive_failures, failing_since, cursor_seq';

function toRecord(r: Row): EndpointRecord {
  return {
    id: r.id,
    keyId: r.key_id,
    url: r.url,
    secret: r.secret,
    types: r.types === null ? null : (JSON.parse(r.types) as EventType[]),
    cities: r.cities === null ? null : (JSON.parse(r.cities) as number[]),
    status: r.status,
    disabledReason: r.disabled_reason,
    disabledAt: r.disabled_at,
    createdAt: r.created_at,
    lastSuccessAt: r.last_success_at,
    lastFailureAt: r.last_failure_at,
    consecutiveFailures: r.consecutive_failures,
    failingSince: r.failing_since,
    cursorSeq: r.cursor_seq,
  };
}

/** `accident,jam` → the types, deduplicated, in the canonical order. Unknown names are refused. */
export function parseTypes(list: string): EventType[] {
  const items = list
    .split(',')
    .map((s) => s.trim().toLowerCase())
    .filter((s) => s !== '');
  if (items.length === 0) throw new WebhookInputError(`--types needs at least one of ${EVENT_TYPES.join(', ')}`);
  for (const t of items) {
    if (!(EVENT_TYPES as readonly string[]).includes(t)) throw new WebhookInputError(`unknown event type '${t}' (expected ${EVENT_TYPES.join(', ')})`);
  }
  return EVENT_TYPES.filter((t) => items.includes(t));
}

/** Any province spellings (names, ASCII, aliases, plates) → plates, deduplicated and sorted. */
export function parseCities(list: string): number[] {
  const items = list
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
  if (items.length === 0) throw new WebhookInputError('--cities needs at least one province');
  const plates = new Set<number>();
  for (const c of items) {
    const p = resolveCity(c);
    if (p === null) {
      const hints = suggestCities(c).map((s) => s.slug);
      throw new WebhookInputError(`unknown city '${c}'${hints.length ? ` (did you mean ${hints.join(', ')}?)` : ''}`);
    }
    plates.add(p.plate);
  }
  return [...plates].sort((a, b) => a - b);
}

export interface AddEndpointInput {
  keyId: string;
  url: string;
  types?: EventType[] | null;
  cities?: number[] | null;
}

export interface AddedEndpoint {
  endpoint: EndpointRecord;
  /** `whsec_…`: returned here once, never by any listing. */
  secret: string;
}

/**
 * Checks the key (exists, not revoked, Enterprise) and the URL (http(s), and unless
 * `allowPrivate` no private/loopback/link-local target), then stores the subscription. It receives
 * the changes committed from now on: its cursor starts at the newest change.
 */
export async function addEndpoint(
  handle: DbHandle,
  input: AddEndpointInput,
  opts: { now: number; allowPrivate: boolean; lookup?: LookupFn },
): Promise<AddedEndpoint> {
  const db = sqliteOf(handle);
  const types = input.types && input.types.length > 0 ? EVENT_TYPES.filter((t) => input.types!.includes(t)) : null;
  const cities = input.cities && input.cities.length > 0 ? [...new Set(input.cities)].sort((a, b) => a - b) : null;
  if (types !== null && types.length !== new Set(input.types).size) throw new WebhookInputError(`unknown event type in ${input.types!.join(',')}`);
  if (cities !== null && cities.some((p) => provinceByPlate(p) === undefined)) throw new WebhookInputError(`unknown province plate in ${cities.join(',')}`);
  const key = db.query<{ plan: string; revoked_at: number | null }, [string]>('SELECT plan, revoked_at FROM api_keys WHERE id = ?').get(input.keyId);
  if (key === null) throw new WebhookInputError(`unknown key '${input.keyId}'`);
  if (key.revoked_at !== null) throw new WebhookInputError(`key '${input.keyId}' is revoked`);
  if (key.plan !== 'enterprise') throw new WebhookInputError(`key '${input.keyId}' is on the ${key.plan} plan; webhooks need an Enterprise key`);
  const check = await checkWebhookUrl(input.url, { allowPrivate: opts.allowPrivate, ...(opts.lookup ? { lookup: opts.lookup } : {}) });
  if (!check.ok) throw new WebhookInputError(`refused URL: ${check.reason}`);
  const id = newEndpointId();
  const secret = generateSecret();
  db.transaction(() => {
    const max = db.query<{ m: number | null }, []>('SELECT MAX(seq) AS m FROM event_changes').get()?.m ?? 0;
    db.query(
      'INSERT INTO webhook_endpoints (id, key_id, url, secret, types, cities, status, created_at, consecutive_failures, cursor_seq) VALUES (?, ?, ?, ?, ?, ?, ?, ?, 0, ?)',
    ).run(id, input.keyId, check.url.href, secret, types && JSON.stringify(types), cities && JSON.stringify(cities), 'active', opts.now, max);
  }).immediate();
  return { endpoint: getEndpoint(db, id)!, secret };
}

export function getEndpoint(handle: DbHandle, id: string): EndpointRecord | null {
  const r = stmt<Row, [string]>(sqliteOf(handle), `SELECT ${COLUMNS} FROM webhook_endpoints WHERE id = ?`).get(id);
  return r === null ? null : toRecord(r);
}

export function listEndpoints(handle: DbHandle, keyId?: string): EndpointRecord[] {
  const db = sqliteOf(handle);
  const rows =
    keyId === undefined
      ? db.query<Row, []>(`SELECT ${COLUMNS} FROM webhook_endpoints ORDER BY created_at, id`).all()
      : db.query<Row, [string]>(`SELECT ${COLUMNS} FROM webhook_endpoints WHERE key_id = ? ORDER BY created_at, id`).all(keyId);
  return rows.map(toRecord);
}

/**
 * Removes a subscription for good: nothing more is delivered, its secret and delivery history are
 * deleted. First marked disabled (a running worker stops picking it at once), then its deliveries
 * are deleted in chunks, then the row. Returns false when there is no such endpoint.
 */
export function removeEndpoint(handle: DbHandle, id: string, now: number): boolean {
  const db = sqliteOf(handle);
  const hit = db.query("UPDATE webhook_endpoints SET status = 'disabled', disabled_reason = 'removed', disabled_at = ? WHERE id = ?").run(now, id).changes;
  if (hit === 0) return false;
  const del = db.query('DELETE FROM webhook_deliveries WHERE id IN (SELECT id FROM webhook_deliveries WHERE endpoint_id = ? LIMIT 5000)');
  while (del.run(id).changes > 0) {
    // Chunks keep each write transaction short for the server sharing the file.
  }
  db.query('DELETE FROM webhook_endpoints WHERE id = ?').run(id);
  return true;
}

function isoOrNull(ms: number | null): string | null {
  return ms === null ? null : iso(ms);
}

export function toView(e: EndpointRecord, counts: { pending: number; delivered: number; failed: number }): WebhookSubscriptionView {
  return {
    id: e.id,
    url: e.url,
    filters: {
      types: e.types,
      cities:
        e.cities === null
          ? null
          : e.cities.map((plate) => {
              const p = provinceByPlate(plate);
              return p ? { slug: p.slug, name: p.name, plate: p.plate } : { slug: 'unknown', name: 'Unknown', plate };
            }),
    },
    status: e.status,
    disabled_reason: e.disabledReason,
    disabled_at: isoOrNull(e.disabledAt),
    created_at: iso(e.createdAt),
    last_success_at: isoOrNull(e.lastSuccessAt),
    last_failure_at: isoOrNull(e.lastFailureAt),
    consecutive_failures: e.consecutiveFailures,
    failing_since: isoOrNull(e.failingSince),
    pending_deliveries: counts.pending,
    delivered_count: counts.delivered,
    failed_count: counts.failed,
  };
}

function deliveryCounts(db: Database, endpointId: string): { pending: number; delivered: number; failed: number } {
  const counts = { pending: 0, delivered: 0, failed: 0 };
  const rows = stmt<{ status: keyof typeof counts; n: number }, [string]>(
    db,
    'SELECT status, COUNT(*) AS n FROM webhook_deliveries WHERE endpoint_id = ? GROUP BY status',
  ).all(endpointId);
  for (const r of rows) if (r.status in counts) counts[r.status] = r.n;
  return counts;
}

/**
 * A key's subscriptions with delivery stats, oldest first: what `GET /api/v1/webhooks` returns
 * (read-only; the secret is never part of it). Without `keyId`: every key's (the CLI's `list`).
 */
export function listSubscriptions(handle: DbHandle, keyId: string): WebhookSubscriptionView[] {
  const db = sqliteOf(handle);
  return listEndpoints(db, keyId).map((e) => toView(e, deliveryCounts(db, e.id)));
}

/** Every subscription with its key id, for the CLI. */
export function listAllSubscriptions(handle: DbHandle, keyId?: string): (WebhookSubscriptionView & { key_id: string })[] {
  const db = sqliteOf(handle);
  return listEndpoints(db, keyId).map((e) => ({ key_id: e.keyId, ...toView(e, deliveryCounts(db, e.id)) }));
}

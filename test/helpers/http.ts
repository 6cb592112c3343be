import { expect } from 'bun:test';
import type { NewEventRow } from '../../src/db/schema/index.ts';
import { EVENT_TYPES, SEVERITIES } from '../../src/domain/event.ts';
import { PROVINCES } from '../../src/provinces/index.ts';
import type { TestApp } from './app.ts';
import { eventRow } from './factories.ts';

/** A parsed RFC 9457 body as CONTRACT §3 shapes it. */
export interface ProblemJson {
  type: string;
  title: string;
  status: number;
  detail: string;
  instance: string;
  code: string;
  request_id: string;
  invalid_params?: { name: string; reason: string }[];
  suggestions?: { slug: string; name: string; url: string }[];
  feature?: string;
}

const PROBLEM_FIELDS = ['type', 'title', 'status', 'detail', 'instance', 'code', 'request_id'] as const;

/**
 * Asserts everything CONTRACT §1/§3/§5 says about an error response and returns its body:
 * status, code, problem+json, no-store, a request id equal to the header, an absolute `type` URL
 * ending in /problems/<slug>, and the request path as `instance`. A 422 is never acceptable.
 */
export async function expectProblem(res: Response, status: number, code: string, instance?: string): Promise<ProblemJson> {
  const text = await res.text();
  expect(res.status).not.toBe(422);
  expect({ status: res.status, text }).toMatchObject({ status });
  expect(res.headers.get('content-type')).toStartWith('application/problem+json');
  expect(res.headers.get('cache-control')).toBe('no-store');
  expect(res.headers.get('access-control-allow-origin')).toBe('*');
  const body = JSON.parse(text) as ProblemJson;
  for (const f of PROBLEM_FIELDS) expect(body).toHaveProperty(f);
  expect(body.code).toBe(code);
  expect(body.status).toBe(status);
  expect(body.title).toBeString();
  expect(body.title.length).toBeGreaterThan(0);
  expect(body.detail).toBeString();
  expect(body.detail.length).toBeGreaterThan(0);
  expect(body.type).toMatch(/^https?:\/\/[^/]+\/problems\/[a-z-]+$/);
  expect(body.type.endsWith(`/problems/${code.replaceAll('_', '-')}`)).toBe(true);
  const rid = res.headers.get('x-request-id');
  expect(rid).toBeString();
  expect(body.request_id).toBe(rid!);
  if (instance !== undefined) expect(body.instance).toBe(instance);
  // Never a stack or SQL in an error body (CONTRACT §3).
  expect(text).not.toMatch(/\bat \S+ \(|SQLITE|SELECT |node_modules/);
  return body;
}

/** A 400 invalid_parameter whose `invalid_params` names `name` (and only known names). */
export async function expectInvalidParam(res: Response, name: string): Promise<ProblemJson> {
  const body = await expectProblem(res, 400, 'invalid_parameter');
  expect(body.invalid_params).toBeArray();
  expect(body.invalid_params!.map((p) => p.name)).toContain(name);
  for (const p of body.invalid_params!) {
    expect(p.reason).toBeString();
    expect(p.reason.length).toBeGreaterThan(0);
  }
  return body;
}

export interface ListBody<T = ApiEvent> {
  data: T[];
  pagination: { limit: number; total: number; next_cursor: string | null; next: string | null };
  meta: {
    api_version: string;
    generated_at: string;
    data_updated_at: string | null;
    update_interval_seconds: number;
    window_hours: number;
    city: { slug: string; name: string; plate: number } | null;
  };
}

export interface ApiEvent {
  id: string;
  type: string;
  subtype: string | null;
  severity: string;
  status: string;
  city: { slug: string; name: string; plate: number };
  district: string | null;
  location: { lat: number; lon: number };
  geometry: { type: 'LineString'; coordinates: [number, number][] } | null;
  road: string | null;
  description: string | null;
  jam: { speed_kmh: number | null; length_m: number | null; delay_s: number | null; level: number | null } | null;
  reported_at: string;
  first_seen_at: string;
  last_seen_at: string;
  updated_at: string;
  cleared_at: string | null;
  source: { name: string; id: string };
  confidence: number;
}

/** GET `path` and expect a 200 JSON list. */
export async function getList(t: TestApp, path: string, init?: RequestInit): Promise<ListBody> {
  const res = await t.request(path, init);
  const text = await res.text();
  expect({ path, status: res.status, text: res.status === 200 ? '' : text }).toEqual({ path, status: 200, text: '' });
  return JSON.parse(text) as ListBody;
}

/** Every id of a list, all pages followed through `pagination.next`. */
export async function allIds(t: TestApp, path: string): Promise<string[]> {
  const ids: string[] = [];
  let next: string | null = path;
  for (let guard = 0; next !== null && guard < 200; guard++) {
    const body: ListBody = await getList(t, next);
    ids.push(...body.data.map((e) => e.id));
    next = body.pagination.next;
  }
  return ids;
}

/** Great-circle distance, written independently of the code under test. */
export function distanceKm(lat1: number, lon1: number, lat2: number, lon2: number): number {
  const rad = Math.PI / 180;
  const h = Math.sin(((lat2 - lat1) * rad) / 2) ** 2 + Math.cos(lat1 * rad) * Math.cos(lat2 * rad) * Math.sin(((lon2 - lon1) * rad) / 2) ** 2;
  return 2 * 6371.0088 * Math.asin(Math.sqrt(h));
}

/** The contract's default order: newest reported_at first, ties by id. */
export function byListOrder(a: Pick<NewEventRow, 'reportedAt' | 'id'>, b: Pick<NewEventRow, 'reportedAt' | 'id'>): number {
  return b.reportedAt - a.reportedAt || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
}

/**
 * A varied, deterministic data set: `count` active events over a few provinces, cycling through
 * the four types and severities, placed around each province capital. Ids are `${prefix}NNNN`.
 */
export function variedRows(now: number, count: number, prefix = 'evt_v'): NewEventRow[] {
  const plates = [34, 6, 35, 1, 7, 61];
  const rows: NewEventRow[] = [];
  for (let i = 0; i < count; i++) {
    const p = PROVINCES[plates[i % plates.length]! - 1]!;
    // Spread up to ~0.3° around the capital so distance and bbox filters cut through the set.
    const dLat = ((i * 37) % 61) / 200 - 0.15;
    const dLon = ((i * 53) % 67) / 200 - 0.165;
    rows.push(
      eventRow(
        {
          id: `${prefix}${String(i).padStart(4, '0')}`,
          plate: p.plate,
          type: EVENT_TYPES[i % EVENT_TYPES.length]!,
          severity: SEVERITIES[(i >> 1) % SEVERITIES.length]!,
          lat: Math.round((p.lat + dLat) * 1e5) / 1e5,
          lon: Math.round((p.lon + dLon) * 1e5) / 1e5,
          reportedAt: now - 60_000 - i * 7_000,
          firstSeenAt: now - 3_600_000,
          lastSeenAt: now - 30_000,
          updatedAt: now - 3_600_000 + i * 1000,
        },
        now,
      ),
    );
  }
  return rows;
}

/** Listens on an ephemeral loopback port; returns the base URL and a stop function. */
export function listen(t: TestApp): { base: string; stop: () => Promise<void> } {
  t.app.listen({ port: 0, hostname: '127.0.0.1' });
  const server = t.app.server;
  if (server === null) throw new Error('the app did not start listening');
  return { base: `http://127.0.0.1:${server.port}`, stop: () => server.stop(true) };
}

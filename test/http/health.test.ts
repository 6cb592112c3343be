import { afterEach, expect, test } from 'bun:test';
import type { HealthReport } from '../../src/modules/health/service.ts';
import type { SourceStatus } from '../../src/scanner/sources/source.ts';
import { testApp, type TestApp } from '../helpers/app.ts';
import { eventRow, insertEvents, insertScan } from '../helpers/factories.ts';

// GET /api/v1/health (CONTRACT §2): pass / warn / fail, 200 for pass and warn, 503 for fail,
// never cached, version "1.0".

/** The report exactly as the service types it. */
type HealthBody = HealthReport;

const HOUR = 3_600_000;
let t: TestApp;
afterEach(() => t.cleanup());

async function health(expectedStatus: number): Promise<HealthBody> {
  const res = await t.request('/api/v1/health');
  const text = await res.text();
  expect({ status: res.status, text: res.status === expectedStatus ? '' : text }).toEqual({ status: expectedStatus, text: '' });
  expect(res.headers.get('cache-control')).toBe('no-store');
  expect(res.headers.get('content-type')).toStartWith('application/json');
  expect(res.headers.get('etag')).toBeNull();
  const body = JSON.parse(text) as HealthBody;
  expect(body.version).toBe('1.0');
  expect(body.release).toBe('test');
  expect(body.time).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/);
  expect(body.checks.scanner.sources).toEqual(['waze']);
  return body;
}

test('warn before any scan has completed', async () => {
  t = await testApp();
  const h = await health(200);
  expect(h.status).toBe('warn');
  expect(h.checks.database.status).toBe('pass');
  expect(h.checks.database.latency_ms).toBeNumber();
  expect(h.checks.scanner).toMatchObject({ status: 'warn', last_scan_started_at: null, last_success_at: null, age_seconds: null });
  expect(h.checks.scanner.reasons.join(' ')).toMatch(/no scan/);
});

test('warn while the first scan runs', async () => {
  t = await testApp();
  t.db.db.$client.run("INSERT INTO scan_runs (started_at, status, sources, errors) VALUES (?, 'running', '{}', '[]')", [t.clock.now - 5000]);
  const h = await health(200);
  expect(h.status).toBe('warn');
  expect(h.checks.scanner.last_scan_started_at).toBe('2026-11-21T09:59:55Z');
  expect(h.checks.scanner.last_success_at).toBeNull();
});

test('pass with a recent successful scan', async () => {
  t = await testApp();
  insertEvents(t.db.db, [eventRow({}, t.clock.now), eventRow({ plate: 6 }, t.clock.now)]);
  insertScan(t.db.db, t.clock.now - 41_000);
  t.readModel.refresh();
  t.loop.nextScanAt = () => t.clock.now + 49_000;
  t.clock.now += 5_000;
  const h = await health(200);
  expect(h.status).toBe('pass');
  expect(h.checks.scanner).toMatchObject({
    status: 'pass',
    last_success_at: '2026-11-21T09:59:19Z',
    last_scan_started_at: '2026-11-21T09:59:14Z',
    age_seconds: 46,
    duration_ms: 5000,
    cells_total: 220,
    cells_ok: 220,
    cells_failed: 0,
    next_scan_at: '2026-11-21T10:00:54Z',
  });
  expect(h.checks.scanner.reasons).toEqual([]);
  expect(h.events.active).toBe(2);
  expect(h.uptime_seconds).toBe(5);
});

test('still pass at exactly two intervals, warn just past them', async () => {
  t = await testApp();
  insertScan(t.db.db, t.clock.now - 180_000);
  expect((await health(200)).status).toBe('pass');
  t.clock.now += 1000;
  const h = await health(200);
  expect(h.status).toBe('warn');
  expect(h.checks.scanner.reasons.join(' ')).toMatch(/older than two intervals/);
});

test('the interval comes from the scan loop', async () => {
  t = await testApp();
  t.loop.intervalSeconds = 600;
  insertScan(t.db.db, t.clock.now - 1000 * 1000);
  expect((await health(200)).status).toBe('pass');
});

test('warn when cells failed in the last scan', async () => {
  t = await testApp();
  insertScan(t.db.db, t.clock.now - 10_000, { status: 'partial', cellsOk: 215, cellsFailed: 5 });
  const h = await health(200);
  expect(h.status).toBe('warn');
  expect(h.checks.scanner).toMatchObject({ status: 'warn', cells_total: 220, cells_ok: 215, cells_failed: 5 });
  expect(h.checks.scanner.reasons.join(' ')).toContain('5 of 220 cells failed');
});

test('warn when the latest scan failed entirely after an earlier success', async () => {
  t = await testApp();
  insertScan(t.db.db, t.clock.now - 100_000);
  insertScan(t.db.db, t.clock.now - 10_000, { status: 'failed', cellsOk: 0, cellsFailed: 220 });
  const h = await health(200);
  expect(h.status).toBe('warn');
  expect(h.checks.scanner.last_success_at).toBe('2026-11-21T09:58:20Z');
  expect(h.checks.scanner.cells_failed).toBe(220);
});

test('warn when a source backs off', async () => {
  t = await testApp();
  insertScan(t.db.db, t.clock.now - 10_000);
  const backingOff: SourceStatus = { name: 'waze', state: 'backing_off', until: t.clock.now + 600_000, reason: 'HTTP 403' };
  t.loop.sourceStatuses = () => [backingOff];
  const h = await health(200);
  expect(h.status).toBe('warn');
  expect(h.checks.scanner.reasons.join(' ')).toContain('waze');
});

test('warn when a working source reports a problem (a replay recording that does not parse)', async () => {
  t = await testApp();
  insertScan(t.db.db, t.clock.now - 10_000);
  const replay: SourceStatus = { name: 'replay', state: 'ok', until: null, reason: 'here/live.json: malformed or truncated JSON (19 characters); serving its last good version' };
  t.loop.sourceStatuses = () => [replay];
  const h = await health(200);
  expect(h.status).toBe('warn');
  expect(h.checks.scanner.reasons).toEqual([`source replay: ${replay.reason}`]);
  expect(h.checks.scanner.backing_off).toEqual([]);
});

test('fail (503) when no scan has succeeded for 24 hours', async () => {
  t = await testApp();
  insertScan(t.db.db, t.clock.now - 24 * HOUR - 1000);
  insertScan(t.db.db, t.clock.now - 60_000, { status: 'failed', cellsOk: 0, cellsFailed: 220 });
  const h = await health(503);
  expect(h.status).toBe('fail');
  expect(h.checks.scanner.status).toBe('fail');
  expect(h.checks.database.status).toBe('pass');
});

test('fail (503) when the service has run 24 hours without any successful scan', async () => {
  t = await testApp();
  expect((await health(200)).status).toBe('warn');
  t.clock.now += 24 * HOUR;
  const h = await health(503);
  expect(h.status).toBe('fail');
  expect(h.checks.scanner.last_success_at).toBeNull();
});

test('fail (503) when the database is closed; lists still answer from memory', async () => {
  t = await testApp();
  insertEvents(t.db.db, [eventRow({}, t.clock.now)]);
  insertScan(t.db.db, t.clock.now - 10_000);
  t.readModel.refresh();
  t.db.sqlite.close();
  const h = await health(503);
  expect(h.status).toBe('fail');
  expect(h.checks.database.status).toBe('fail');
  expect(h.checks.database.latency_ms).toBeNull();
  // The error is named, but never as a stack or SQL text.
  expect(JSON.stringify(h)).not.toMatch(/SELECT|\bat \S+ \(/);
  expect(h.events.active).toBe(1);
  expect((await t.request('/api/v1/events')).status).toBe(200);
});

test('HEAD /api/v1/health answers like GET', async () => {
  t = await testApp();
  insertScan(t.db.db, t.clock.now - 10_000);
  const res = await t.request('/api/v1/health', { method: 'HEAD' });
  expect(res.status).toBe(200);
  expect(res.headers.get('cache-control')).toBe('no-store');
  expect(await res.text()).toBe('');
});

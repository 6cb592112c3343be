/**
 * runScan end to end: sources pointed at a real local HTTP server (the fake upstream map) or a
 * replay directory, a real SQLite file, a manual clock and a few small cells.
 */
import { Database } from 'bun:sqlite';
import { afterEach, beforeEach, describe, expect, test } from 'bun:test';
import { join } from 'node:path';
import { silentLogger } from '../../src/log.ts';
import { checkHealth, type ScanLoopView } from '../../src/modules/health/service.ts';
import { toApiEvent } from '../../src/read-model/event-json.ts';
import { eventIdFor } from '../../src/scanner/event-id.ts';
import { yieldToLoop } from '../../src/scanner/pool.ts';
import { ReplaySource } from '../../src/scanner/sources/replay.ts';
import type { Source } from '../../src/scanner/sources/source.ts';
import { tomtomIncident, wazeAlert, wazeJam, wazeResponse } from '../../scripts/upstream-payloads.ts';
import type { FakeReply } from '../helpers/fake-upstream.ts';
import { testApp } from '../helpers/app.ts';
import { cells, PLACES, replayDir, scanHarness, scanHarnessOn, startWorld, type ScanHarness, type UpstreamWorld } from '../helpers/scan.ts';

const T0 = Date.UTC(2026, 10, 21, 7, 30);
const ROOT = join(import.meta.dir, '..', '..');

function alert(uuid: string, at: { lat: number; lon: number }, over: Partial<Parameters<typeof wazeAlert>[0]> = {}) {
  return wazeAlert({ uuid, type: 'ACCIDENT', subtype: 'ACCIDENT_MINOR', lat: at.lat, lon: at.lon, pubMillis: T0 - 600_000, street: 'D100 / E-5', city: 'Şişli', reliability: 8, ...over });
}

let h: ScanHarness;
let world: UpstreamWorld;

function loopView(sources: readonly Source[]): ScanLoopView {
  return { sources: sources.map((s) => s.name), intervalSeconds: 90, nextScanAt: () => null, sourceStatuses: () => sources.map((s) => s.status()) };
}

function health(sources: readonly Source[]) {
  return checkHealth({ db: h.db.db, clock: h.clock.now, startedAt: T0, release: 'test', loop: loopView(sources), activeEvents: () => 0 });
}

beforeEach(() => {
  h = scanHarness();
  h.clock.set(T0);
});
afterEach(async () => {
  await world?.stop();
  h.cleanup();
});

describe('runScan: items → events', () => {
  test('a first scan creates one event per item: province, district, cells, outbox rows and the run record', async () => {
    const list = cells('ist', 'ank', 'izm');
    world = startWorld(list, h.clock);
    world.waze.alerts.push(
      alert('acc-sisli', PLACES.sisli),
      alert('haz-kizilay', PLACES.kizilay, { type: 'HAZARD', subtype: 'HAZARD_ON_ROAD_POT_HOLE', street: 'Atatürk Blv.', city: 'Çankaya' }),
      alert('clo-konak', PLACES.konak, { type: 'ROAD_CLOSED', subtype: 'ROAD_CLOSED_EVENT', street: 'Mustafa Kemal Sahil Blv.', city: 'Konak' }),
      alert('police-sisli', PLACES.sisli, { type: 'POLICE', subtype: 'POLICE_VISIBLE' }),
    );
    world.waze.jams.push(
      wazeJam({ id: 7001, line: [[32.854, 39.92], [32.846, 39.925]], level: 4, speedKMH: 8, length: 900, delay: 300, pubMillis: T0 - 300_000, street: 'Atatürk Blv.', city: 'Çankaya' }),
    );
    const waze = world.wazeSource();
    const s = await h.scan([waze], list);

    expect(s).toMatchObject({ status: 'ok', cellsTotal: 3, cellsOk: 3, cellsFailed: 0, items: 4, outsideTurkey: 0, created: 4, updated: 0, cleared: 0, errors: [] });
    const evs = h.events();
    expect(evs).toHaveLength(4);
    const acc = h.event('waze', 'acc-sisli')!;
    expect(acc).toMatchObject({ type: 'accident', severity: 'minor', status: 'active', plate: 34, district: 'Şişli', road: 'D100 / E-5', cells: 'waze:ist', missedScans: 0 });
    expect(acc.id).toBe(eventIdFor('waze', 'acc-sisli'));
    expect(acc).toMatchObject({ firstSeenAt: T0, lastSeenAt: T0, updatedAt: T0, clearedAt: null });
    expect(h.event('waze', 'haz-kizilay')).toMatchObject({ type: 'hazard', plate: 6, district: 'Çankaya' });
    expect(h.event('waze', 'clo-konak')).toMatchObject({ type: 'road_closure', severity: 'major', plate: 35, cells: 'waze:izm' });
    expect(h.event('waze', '7001')).toMatchObject({ type: 'jam', severity: 'major', plate: 6, jam: { speed_kmh: 8, length_m: 900, delay_s: 300, level: 4 } });
    expect(h.event('waze', 'police-sisli')).toBeUndefined();

    const changes = h.changes();
    expect(changes).toHaveLength(4);
    for (const c of changes) {
      expect(c.change).toBe('created');
      expect(c.scanId).toBe(s.id);
      expect(c.at).toBe(T0);
      expect(JSON.parse(c.payload)).toEqual(toApiEvent(evs.find((e) => e.id === c.eventId)!));
    }

    const [run] = h.runs();
    expect(run).toMatchObject({ id: s.id, status: 'ok', startedAt: T0, finishedAt: T0, cellsTotal: 3, cellsOk: 3, cellsFailed: 0, items: 4, created: 4, updated: 0, cleared: 0, errors: [] });
    expect(run!.sources).toEqual({ waze: { cellsOk: 3, cellsFailed: 0, requests: 3, items: 4, failures: [], backingOff: false } });
  });

  test('an item in two overlapping cells is one event with both cells recorded', async () => {
    const list = cells('ist', 'ist2');
    world = startWorld(list, h.clock);
    world.waze.alerts.push(alert('acc-besiktas', PLACES.besiktas), alert('acc-umraniye', PLACES.umraniye));
    const s = await h.scan([world.wazeSource()], list);
    expect(s.items).toBe(3); // the overlap item came back from both cells
    expect(s.created).toBe(2);
    expect(h.events()).toHaveLength(2);
    expect(h.event('waze', 'acc-besiktas')!.cells).toBe('waze:ist waze:ist2');
    expect(h.event('waze', 'acc-umraniye')!.cells).toBe('waze:ist2');
    expect(h.changes().filter((c) => c.eventId === eventIdFor('waze', 'acc-besiktas'))).toHaveLength(1);
  });

  test('an event seen by two cells is cleared only once both succeed without it, twice', async () => {
    const list = cells('ist', 'ist2');
    world = startWorld(list, h.clock);
    world.waze.alerts.push(alert('acc-besiktas', PLACES.besiktas));
    const waze = world.wazeSource();
    await h.scan([waze], list);
    world.waze.alerts.length = 0;
    world.override('waze', 'ist2', { status: 500, json: { error: 'upstream' } });
    for (let i = 0; i < 3; i++) {
      h.clock.advance(90_000);
      expect((await h.scan([waze], list)).status).toBe('partial');
      expect(h.event('waze', 'acc-besiktas')).toMatchObject({ status: 'active', missedScans: 0 });
    }
    world.override('waze', 'ist2', null);
    h.clock.advance(90_000);
    await h.scan([waze], list);
    expect(h.event('waze', 'acc-besiktas')).toMatchObject({ status: 'active', missedScans: 1 });
    h.clock.advance(90_000);
    expect((await h.scan([waze], list)).cleared).toBe(1);
    expect(h.event('waze', 'acc-besiktas')).toMatchObject({ status: 'cleared', clearedAt: h.clock.now() });
  });

  test('items outside Türkiye are dropped and never stored', async () => {
    const list = cells('ist', 'gre');
    world = startWorld(list, h.clock);
    world.waze.alerts.push(alert('acc-sisli', PLACES.sisli), alert('acc-thessaloniki', PLACES.thessaloniki, { city: 'Thessaloniki', street: 'Egnatia' }));
    const s = await h.scan([world.wazeSource()], list);
    expect(s).toMatchObject({ status: 'ok', items: 2, outsideTurkey: 1, created: 1 });
    expect(h.events().map((e) => e.sourceId)).toEqual(['acc-sisli']);
    expect(h.changes()).toHaveLength(1);
  });

  test('ids are namespaced by source: the same upstream id from two sources is two events', async () => {
    const list = cells('ank');
    world = startWorld(list, h.clock);
    world.waze.alerts.push(alert('shared-id', PLACES.kizilay, { city: 'Çankaya' }));
    world.tomtom.push(
      tomtomIncident({ id: 'shared-id', iconCategory: 1, magnitudeOfDelay: 2, events: [{ description: 'Accident', code: 201, iconCategory: 1 }], coordinates: [[PLACES.kizilay.lon, PLACES.kizilay.lat]], startTime: '2026-11-21T07:20:00Z' }),
    );
    const s = await h.scan([world.wazeSource(), world.tomtomSource()], list);
    expect(s).toMatchObject({ cellsTotal: 2, cellsOk: 2, created: 2 });
    const ids = h.events().map((e) => e.id).sort();
    expect(ids).toEqual([eventIdFor('tomtom', 'shared-id'), eventIdFor('waze', 'shared-id')].sort());
    expect(new Set(ids).size).toBe(2);
    // Stable: the next scan finds the same two events and creates nothing.
    h.clock.advance(90_000);
    expect(await h.scan([world.wazeSource(), world.tomtomSource()], list)).toMatchObject({ created: 0, updated: 0, cleared: 0 });
    expect(h.events().map((e) => e.id).sort()).toEqual(ids);
  });
});

describe('runScan: upstream failures', () => {
  const blocks: [string, FakeReply, string][] = [
    ['403', { status: 403, html: '<html><body>Access denied</body></html>' }, 'Waze answered 403'],
    ['an HTML bot wall', { html: '<!doctype html><html><body>Please verify you are a human</body></html>' }, 'HTML page'],
  ];
  for (const [name, reply, reason] of blocks) {
    test(`Waze ${name} → the source backs off as a whole, health warns naming it, nothing is cleared`, async () => {
      const list = cells('ist', 'ank', 'izm');
      world = startWorld(list, h.clock);
      world.waze.alerts.push(alert('a-ist', PLACES.sisli), alert('a-ank', PLACES.kizilay), alert('a-izm', PLACES.konak));
      const waze = world.wazeSource();
      await h.scan([waze], list);
      expect(health([waze]).checks.scanner.status).toBe('pass');

      world.waze.alerts.length = 0;
      world.override('waze', 'ist', reply);
      h.clock.advance(90_000);
      const s = await h.scan([waze], list);
      expect(s).toMatchObject({ status: 'failed', cellsOk: 0, cellsFailed: 3, cleared: 0 });
      expect(world.requests('waze', 'ist')).toBe(2); // once in each scan; a block is never retried
      expect(world.requests('waze', 'ank')).toBe(1); // not asked while the source backs off
      const run = h.runs().at(-1)!;
      expect(run.sources.waze).toMatchObject({ cellsOk: 0, cellsFailed: 3, backingOff: true });
      expect(run.sources.waze!.failures.map((f) => `${f.cell}:${f.kind}`)).toEqual(['ist:blocked', 'ank:backoff', 'izm:backoff']);
      expect(run.errors[0]).toContain('waze: 3 of 3 cells failed');

      const report = health([waze]);
      expect(report.status).toBe('warn');
      expect(report.checks.scanner.status).toBe('warn');
      expect(report.checks.scanner.backing_off).toEqual([{ source: 'waze', until: new Date(h.clock.now() + 60_000).toISOString().replace('.000', ''), reason: expect.stringContaining(reason) }]);
      expect(report.checks.scanner.reasons.some((r) => r.startsWith('source waze is backing off') && r.includes(reason))).toBe(true);

      // While backing off nothing is requested and nothing is cleared, however many scans pass.
      h.clock.advance(30_000);
      await h.scan([waze], list);
      expect(world.fake.count()).toBe(4);
      expect(h.events().map((e) => `${e.sourceId}:${e.status}:${e.missedScans}`).sort()).toEqual(['a-ank:active:0', 'a-ist:active:0', 'a-izm:active:0']);

      // After the back-off period the next scan probes again; a success closes the breaker.
      world.override('waze', 'ist', null);
      h.clock.advance(60_000);
      expect((await h.scan([waze], list)).status).toBe('ok');
      expect(waze.status().state).toBe('ok');
      expect(health([waze]).checks.scanner.backing_off).toEqual([]);
    });
  }

  const wazeFailures: [string, FakeReply, string, number][] = [
    ['HTTP 500', { status: 500, json: { error: 'internal' } }, 'http', 2],
    ['a timeout', { delayMs: 400, json: { alerts: [] } }, 'timeout', 2],
    ['truncated JSON', { body: JSON.stringify(wazeResponse([alert('x', PLACES.sisli)], [], T0)), headers: { 'content-type': 'application/json' }, truncate: 40 }, 'parse', 1],
  ];
  for (const [name, reply, kind, attempts] of wazeFailures) {
    test(`Waze ${name} in one cell → that cell failed, its events kept; the other cells' missing events clear`, async () => {
      await perCellFailure('waze', reply, kind, attempts);
    });
  }

  test('TomTom HTML instead of JSON in one cell → that cell failed (no back-off), its events kept', async () => {
    await perCellFailure('tomtom', { html: '<html><body>502 Bad Gateway</body></html>' }, 'parse', 1);
  });

  async function perCellFailure(source: 'waze' | 'tomtom', reply: FakeReply, kind: string, attempts: number) {
    const list = cells('ist', 'ank', 'izm');
    world = startWorld(list, h.clock);
    const at = { ist: PLACES.sisli, ank: PLACES.kizilay, izm: PLACES.konak };
    for (const [cell, p] of Object.entries(at)) {
      if (source === 'waze') world.waze.alerts.push(alert(`a-${cell}`, p));
      else world.tomtom.push(tomtomIncident({ id: `a-${cell}`, iconCategory: 1, magnitudeOfDelay: 1, events: [{ description: 'Accident', code: 201, iconCategory: 1 }], coordinates: [[p.lon, p.lat]], startTime: '2026-11-21T07:00:00Z' }));
    }
    const src = source === 'waze' ? world.wazeSource({ timeoutMs: 150 }) : world.tomtomSource();
    expect((await h.scan([src], list)).created).toBe(3);

    world.waze.alerts.length = 0;
    world.tomtom.length = 0;
    world.override(source, 'ist', reply);
    world.fake.clearRequests();
    for (let i = 1; i <= 2; i++) {
      h.clock.advance(90_000);
      const s = await h.scan([src], list);
      expect(s).toMatchObject({ status: 'partial', cellsOk: 2, cellsFailed: 1, cleared: i === 2 ? 2 : 0 });
      const run = h.runs().at(-1)!;
      expect(run).toMatchObject({ status: 'partial', cellsTotal: 3, cellsOk: 2, cellsFailed: 1 });
      expect(run.sources[source]).toMatchObject({ cellsOk: 2, cellsFailed: 1, backingOff: false });
      expect(run.sources[source]!.failures).toEqual([{ cell: 'ist', kind, error: expect.any(String) }]);
      expect(run.errors).toEqual([expect.stringContaining(`${source}: 1 of 3 cells failed (e.g. ist: `)]);
    }
    expect(world.requests(source, 'ist')).toBe(2 * attempts); // 5xx and timeouts are retried once
    expect(src.status().state).toBe('ok');
    expect(h.event(source, 'a-ist')).toMatchObject({ status: 'active', missedScans: 0, clearedAt: null });
    expect(h.event(source, 'a-ank')).toMatchObject({ status: 'cleared', clearedAt: h.clock.now() });
    expect(h.event(source, 'a-izm')).toMatchObject({ status: 'cleared' });

    const report = health([src]);
    expect(report.checks.scanner.status).toBe('warn');
    expect(report.checks.scanner).toMatchObject({ cells_total: 3, cells_ok: 2, cells_failed: 1 });
    expect(report.checks.scanner.reasons).toContain('1 of 3 cells failed in the last scan');
  }

  test('every cell failing is a failed run that clears nothing', async () => {
    const list = cells('ist', 'ank');
    world = startWorld(list, h.clock);
    world.waze.alerts.push(alert('a-ist', PLACES.sisli), alert('a-ank', PLACES.kizilay));
    const waze = world.wazeSource();
    await h.scan([waze], list);
    world.waze.alerts.length = 0;
    world.override('waze', 'ist', { status: 502, body: 'bad gateway' });
    world.override('waze', 'ank', { status: 502, body: 'bad gateway' });
    for (let i = 0; i < 3; i++) {
      h.clock.advance(90_000);
      expect(await h.scan([waze], list)).toMatchObject({ status: 'failed', cellsOk: 0, cellsFailed: 2, cleared: 0 });
    }
    expect(h.events().every((e) => e.status === 'active' && e.missedScans === 0)).toBe(true);
    expect(h.runs().map((r) => r.status)).toEqual(['ok', 'failed', 'failed', 'failed']);
    expect(health([waze]).checks.scanner.reasons).toContain('2 of 2 cells failed in the last scan');
  });

  test('a source that throws fails only its cells; another source carries on', async () => {
    const list = cells('ist', 'ank');
    world = startWorld(list, h.clock);
    world.waze.alerts.push(alert('a-ist', PLACES.sisli));
    const broken: Source = {
      name: 'tomtom',
      concurrency: 2,
      fetchCell: async () => {
        throw new TypeError('adapter bug');
      },
      status: () => ({ name: 'tomtom', state: 'ok', until: null, reason: null }),
    };
    const s = await h.scan([world.wazeSource(), broken], list);
    expect(s).toMatchObject({ status: 'partial', cellsTotal: 4, cellsOk: 2, cellsFailed: 2, created: 1 });
    expect(h.runs()[0]!.sources.tomtom).toMatchObject({ cellsOk: 0, cellsFailed: 2, failures: [{ cell: 'ist', kind: 'parse', error: 'TypeError: adapter bug' }, { cell: 'ank', kind: 'parse', error: 'TypeError: adapter bug' }] });
  });
});

describe('runScan: commit failures and shutdown', () => {
  test('a write failing inside the transaction rolls the whole scan back and records the run failed', async () => {
    const list = cells('ist', 'ank');
    world = startWorld(list, h.clock);
    world.waze.alerts.push(alert('a-1', PLACES.sisli), alert('a-2', PLACES.kizilay));
    const waze = world.wazeSource();
    await h.scan([waze], list);
    const before = { events: JSON.stringify(h.events()), changes: h.changes().length };
    // A temporary trigger on the scanner's own connection: the third new event cannot be inserted.
    h.writer.sqlite.exec("CREATE TEMP TRIGGER boom BEFORE INSERT ON main.events WHEN NEW.source_id = 'a-boom' BEGIN SELECT RAISE(ABORT, 'injected failure'); END");
    world.waze.alerts.push(alert('a-3', PLACES.sisli), alert('a-boom', PLACES.kizilay));
    world.waze.alerts.splice(0, 1);
    h.clock.advance(90_000);
    const errors: string[] = [];
    const logger = { ...silentLogger, error: (msg: string, f?: Record<string, unknown>) => void errors.push(`${msg}: ${String(f?.error)}`) };
    await expect(h.scan([waze], list, { logger })).rejects.toThrow('injected failure');
    expect(h.writer.sqlite.inTransaction).toBe(false);
    expect(JSON.stringify(h.events())).toBe(before.events); // a-3 not created, a-1 not missed
    expect(h.changes()).toHaveLength(before.changes);
    expect(h.runs().at(-1)).toMatchObject({ status: 'failed', finishedAt: h.clock.now(), errors: [expect.stringContaining('commit failed: SQLiteError: injected failure')] });
    expect(errors).toEqual([expect.stringContaining('scan commit failed: SQLiteError: injected failure')]);
    // The next scan (trigger gone) carries on.
    h.writer.sqlite.exec('DROP TRIGGER temp.boom');
    h.clock.advance(90_000);
    expect(await h.scan([waze], list)).toMatchObject({ status: 'ok', created: 2 });
  });

  test('a database locked by another writer fails the scan with that error, not a secondary one', async () => {
    h.writer.sqlite.exec('PRAGMA busy_timeout = 20');
    const locker: Source = {
      name: 'replay',
      concurrency: 1,
      async fetchCell() {
        // Someone else (another process) takes the write lock while the scan fetches.
        if (!h.db.sqlite.inTransaction) h.db.sqlite.exec('BEGIN IMMEDIATE');
        return { ok: true, items: [], requests: 0 };
      },
      status: () => ({ name: 'replay', state: 'ok', until: null, reason: null }),
    };
    const errors: string[] = [];
    const logger = { ...silentLogger, error: (msg: string) => void errors.push(msg) };
    try {
      await expect(h.scan([locker], cells('ank'), { logger })).rejects.toThrow('database is locked');
    } finally {
      h.db.sqlite.exec('ROLLBACK');
    }
    expect(errors).toEqual(['scan commit failed', 'scan failure not recorded']);
    expect(h.writer.sqlite.inTransaction).toBe(false);
    // The run could not be closed: it stays 'running' until the next start marks it interrupted.
    expect(h.runs().map((r) => r.status)).toEqual(['running']);
  });

  test('an abort (shutdown) fails the cells not fetched yet; nothing is cleared in them', async () => {
    const list = cells('ist', 'ank', 'izm');
    world = startWorld(list, h.clock);
    world.waze.alerts.push(alert('a-ist', PLACES.sisli), alert('a-ank', PLACES.kizilay), alert('a-izm', PLACES.konak));
    const waze = world.wazeSource();
    await h.scan([waze], list);
    world.waze.alerts.length = 0;
    h.clock.advance(90_000);
    await h.scan([waze], list); // one miss each
    const abort = new AbortController();
    const aborting: Source = {
      name: waze.name,
      concurrency: 1,
      fetchCell: async (cell, signal) => {
        const r = await waze.fetchCell(cell, signal);
        abort.abort(); // SIGTERM arrives after the first cell
        return r;
      },
      status: () => waze.status(),
    };
    h.clock.advance(90_000);
    const s = await h.scan([aborting], list, { signal: abort.signal });
    expect(s).toMatchObject({ status: 'partial', cellsOk: 1, cellsFailed: 2, cleared: 1 });
    expect(h.runs().at(-1)!.sources.waze!.failures.map((f) => `${f.cell}:${f.error}`)).toEqual(['ank:scan aborted (shutting down)', 'izm:scan aborted (shutting down)']);
    expect(h.event('waze', 'a-ist')!.status).toBe('cleared');
    expect(h.event('waze', 'a-ank')).toMatchObject({ status: 'active', missedScans: 1 });
    expect(h.event('waze', 'a-izm')).toMatchObject({ status: 'active', missedScans: 1 });
  });
});

describe('runScan: readers never see half a scan', () => {
  test('during the open transaction the read model, the API and a fresh connection all see the previous state', async () => {
    const rd = replayDir();
    h.cleanup();
    const t = await testApp({ now: T0 });
    h = scanHarnessOn(t);
    try {
      const list = cells('ist', 'ank', 'izm');
      const first = [alert('keep-1', PLACES.sisli), alert('keep-2', PLACES.kizilay), alert('gone-1', PLACES.konak)];
      rd.write('waze', 'a.json', wazeResponse(first, [], T0));
      const replay = new ReplaySource({ dir: rd.dir });
      await h.scan([replay], list);

      const { readModel, app } = t;
      readModel.refresh();
      expect(readModel.activeCount).toBe(3);
      const before = { events: 3, changes: h.changes().length };

      const added = Array.from({ length: 40 }, (_, i) => alert(`new-${i}`, { lat: PLACES.sisli.lat + i * 1e-4, lon: PLACES.sisli.lon }));
      rd.write('waze', 'a.json', wazeResponse([...first.slice(0, 2), ...added], [], T0));
      // gone-1 needs two misses: do the first one now.
      h.clock.advance(90_000);
      await h.scan([replay], list);
      readModel.refresh();
      const mid = { active: readModel.activeCount, changes: h.changes().length };
      expect(mid.active).toBe(43); // gone-1 has missed one scan: still active

      let checks = 0;
      let writerAhead = 0;
      const pause = async () => {
        if (h.writer.sqlite.inTransaction) {
          checks++;
          const writerCount = h.writer.sqlite.query<{ n: number }, []>("SELECT count(*) AS n FROM events WHERE status = 'active'").get()!.n;
          const writerChanges = h.writer.sqlite.query<{ n: number }, []>('SELECT count(*) AS n FROM event_changes').get()!.n;
          if (writerCount !== mid.active || writerChanges !== mid.changes) writerAhead++;
          readModel.refresh();
          expect(readModel.activeCount).toBe(mid.active);
          const fresh = new Database(h.db.path, { readonly: true });
          try {
            expect(fresh.query<{ n: number }, []>("SELECT count(*) AS n FROM events WHERE status = 'active'").get()!.n).toBe(mid.active);
            expect(fresh.query<{ n: number }, []>('SELECT count(*) AS n FROM event_changes').get()!.n).toBe(mid.changes);
            expect(fresh.query<{ s: string }, []>('SELECT status AS s FROM scan_runs ORDER BY id DESC LIMIT 1').get()!.s).toBe('running');
          } finally {
            fresh.close();
          }
          if (checks === 3) {
            const res = await app.handle(new Request('http://localhost/api/v1/events?limit=1000'));
            expect(((await res.json()) as { data: unknown[] }).data).toHaveLength(mid.active);
          }
        }
        await yieldToLoop();
      };
      // Third scan: all 40 new ones are seen again, gone-1 clears, a second batch is created.
      const more = Array.from({ length: 20 }, (_, i) => alert(`more-${i}`, { lat: PLACES.kizilay.lat + i * 1e-4, lon: PLACES.kizilay.lon }));
      rd.write('waze', 'a.json', wazeResponse([...first.slice(0, 2), ...added, ...more], [], T0));
      h.clock.advance(90_000);
      const s = await h.scan([replay], list, { pause, chunkSize: 4 });
      expect(s).toMatchObject({ created: 20, cleared: 1 });
      expect(checks).toBeGreaterThan(5);
      expect(writerAhead).toBeGreaterThan(0); // the writer's own connection did see its pending rows

      readModel.refresh();
      expect(readModel.activeCount).toBe(62);
      expect(h.changes().length).toBe(mid.changes + 21);
      expect(before.changes).toBe(3);
    } finally {
      rd.cleanup();
    }
  });
});

describe('trafik scan --once', () => {
  async function cli(env: Record<string, string>): Promise<{ code: number; stdout: string; stderr: string }> {
    const proc = Bun.spawn(['bun', join(ROOT, 'src/main.ts'), 'scan', '--once', '--json'], {
      cwd: ROOT,
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', LOG_LEVEL: 'error', ...env },
      stdout: 'pipe',
      stderr: 'pipe',
    });
    const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
    return { code, stdout, stderr };
  }

  test('one scan over a replay directory: exit 0, one JSON line, events stored', async () => {
    const rd = replayDir();
    try {
      rd.write('waze', 'ist.json', wazeResponse([alert('cli-1', PLACES.sisli), alert('cli-2', PLACES.kizilay)], [], T0));
      const r = await cli({ SOURCES: 'replay', REPLAY_DIR: rd.dir, DATABASE_PATH: h.db.path });
      expect(r.stderr).toBe('');
      expect(r.code).toBe(0);
      const lines = r.stdout.trim().split('\n');
      expect(lines).toHaveLength(1);
      const summary = JSON.parse(lines[0]!);
      expect(summary).toMatchObject({ status: 'ok', cellsTotal: 220, cellsOk: 220, cellsFailed: 0, created: 2, errors: [] });
      expect(h.events().map((e) => e.sourceId).sort()).toEqual(['waze:cli-1', 'waze:cli-2']);
      expect(h.runs()).toHaveLength(1);
    } finally {
      rd.cleanup();
    }
  });

  test('every cell failing: exit 1, the JSON says failed', async () => {
    // A bot wall: the first answers put the source in back-off, every other cell fails at once.
    const wall = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: () => new Response('<html>captcha</html>', { headers: { 'content-type': 'text/html' } }) });
    try {
      const r = await cli({ SOURCES: 'waze', WAZE_URL: `http://127.0.0.1:${wall.port}/georss`, DATABASE_PATH: h.db.path });
      expect(r.code).toBe(1);
      const summary = JSON.parse(r.stdout.trim());
      expect(summary).toMatchObject({ status: 'failed', cellsOk: 0, cellsFailed: 220 });
      expect(h.runs()[0]).toMatchObject({ status: 'failed', cellsFailed: 220 });
    } finally {
      wall.stop(true);
    }
  });

  test('a REPLAY_DIR that is not a folder stops before scanning: exit 2, one line naming it', async () => {
    const r = await cli({ SOURCES: 'replay', REPLAY_DIR: join(h.db.dir, 'no-such-dir'), DATABASE_PATH: h.db.path });
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toContain('REPLAY_DIR');
  });

  test("leaves a running server's scan in flight alone, but closes runs too old to be alive", async () => {
    const now = Date.now();
    const insert = h.db.sqlite.query("INSERT INTO scan_runs (started_at, status, sources, errors) VALUES (?, 'running', '{}', '[]') RETURNING id");
    const live = (insert.get(now - 60_000) as { id: number }).id;
    const dead = (insert.get(now - 3 * 24 * 3600_000) as { id: number }).id;
    const rd = replayDir();
    try {
      const r = await cli({ SOURCES: 'replay', REPLAY_DIR: rd.dir, DATABASE_PATH: h.db.path });
      expect(r.code).toBe(0);
    } finally {
      rd.cleanup();
    }
    const byId = new Map(h.runs().map((r) => [r.id, r]));
    expect(byId.get(live)!.status).toBe('running');
    expect(byId.get(dead)!.status).toBe('failed');
  });
});

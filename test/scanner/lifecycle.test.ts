/**
 * An event's life across scans (CONTRACT §2 "When an event is updated", §7): timestamps, material
 * changes vs noise, clearing after two consecutive successful scans of its cells, reappearance,
 * the outbox; then retention and interrupted runs.
 */
import { afterEach, beforeEach, describe, expect, test } from 'bun:test';
import { eventChanges, events, scanRuns, type EventChangeRow } from '../../src/db/schema/index.ts';
import { toApiEvent } from '../../src/read-model/event-json.ts';
import { eventIdFor } from '../../src/scanner/event-id.ts';
import { purgeOld } from '../../src/scanner/retention.ts';
import { markInterruptedScans } from '../../src/scanner/scan.ts';
import type { WazeSource } from '../../src/scanner/sources/waze.ts';
import { wazeAlert, wazeJam, type WazeAlertSpec, type WazeJamSpec } from '../../scripts/upstream-payloads.ts';
import { eventRow, insertEvents } from '../helpers/factories.ts';
import { cells, PLACES, scanHarness, startWorld, type ScanHarness, type UpstreamWorld } from '../helpers/scan.ts';

const T0 = Date.UTC(2026, 10, 21, 7, 30);
const STEP = 90_000;
const LIST = cells('ank', 'ist');

let h: ScanHarness;
let world: UpstreamWorld;
let waze: WazeSource;

beforeEach(() => {
  h = scanHarness();
  h.clock.set(T0);
  world = startWorld(LIST, h.clock);
  waze = world.wazeSource();
});
afterEach(async () => {
  await world.stop();
  h.cleanup();
});

const accident: WazeAlertSpec = { uuid: 'acc-1', type: 'ACCIDENT', subtype: 'ACCIDENT_MINOR', lat: PLACES.kizilay.lat, lon: PLACES.kizilay.lon, pubMillis: T0 - 600_000, street: 'Atatürk Blv.', city: 'Çankaya', reliability: 8 };
const jam: WazeJamSpec = { id: 9001, line: [[32.78, 39.91], [32.77, 39.912], [32.76, 39.914]], level: 3, speedKMH: 15, length: 1200, delay: 200, pubMillis: T0 - 300_000, street: 'Eskişehir Yolu', city: 'Çankaya' };

/** Put exactly these on the fake map. */
function show(alerts: WazeAlertSpec[], jams: WazeJamSpec[] = []): void {
  world.waze.alerts.splice(0, Infinity, ...alerts.map(wazeAlert));
  world.waze.jams.splice(0, Infinity, ...jams.map(wazeJam));
}

async function scanAt(offsetSteps: number) {
  h.clock.set(T0 + offsetSteps * STEP);
  return h.scan([waze], LIST);
}

function changesOf(sourceId: string): EventChangeRow[] {
  return h.changes().filter((c) => c.eventId === eventIdFor('waze', sourceId));
}

describe('lifecycle timestamps and material changes', () => {
  test('first_seen_at is fixed, last_seen_at moves every sighting, updated_at only on a change a client acts on', async () => {
    show([accident], [jam]);
    await scanAt(0);
    const created = h.event('waze', '9001')!;
    expect(created).toMatchObject({ firstSeenAt: T0, lastSeenAt: T0, updatedAt: T0, status: 'active' });

    // Each step: what the map shows, and whether the jam (J) / the accident (A) count as updated.
    const steps: { name: string; a: Partial<WazeAlertSpec>; j: Partial<WazeJamSpec>; updA: boolean; updJ: boolean }[] = [
      { name: 'seen again unchanged', a: {}, j: {}, updA: false, updJ: false },
      { name: 'jam noise: speed +4 km/h, delay +50 s, length changes; accident moves 30 m, reliability drops', a: { lat: accident.lat + 0.0003, reliability: 6 }, j: { speedKMH: 19, delay: 250, length: 1500 }, updA: false, updJ: false },
      { name: 'jam speed +6 km/h (over 5 km/h and 20 %)', a: {}, j: { speedKMH: 21, delay: 250 }, updA: false, updJ: true },
      { name: 'jam delay +80 s (over 60 s and 20 %)', a: {}, j: { speedKMH: 21, delay: 330 }, updA: false, updJ: true },
      { name: 'jam speed 21→27 (6 km/h and 22 %), delay 330→390 (60 s: not over)', a: {}, j: { speedKMH: 27, delay: 390 }, updA: false, updJ: true },
      { name: 'jam speed 27→33 (6 km/h, 18 %: under the relative floor)', a: {}, j: { speedKMH: 33, delay: 390 }, updA: false, updJ: false },
      { name: 'jam level 3→4 (severity moderate→major)', a: {}, j: { speedKMH: 33, delay: 390, level: 4 }, updA: false, updJ: true },
      { name: 'accident road renamed', a: { street: 'Atatürk Bulvarı' }, j: { speedKMH: 33, delay: 390, level: 4 }, updA: true, updJ: false },
      { name: 'accident description added', a: { street: 'Atatürk Bulvarı', reportDescription: 'İki araç çarpıştı' }, j: { speedKMH: 33, delay: 390, level: 4 }, updA: true, updJ: false },
      { name: 'accident subtype MINOR→MAJOR (severity minor→major)', a: { street: 'Atatürk Bulvarı', reportDescription: 'İki araç çarpıştı', subtype: 'ACCIDENT_MAJOR', reliability: 9 }, j: { speedKMH: 33, delay: 390, level: 4 }, updA: true, updJ: false },
      { name: 'jam geometry changes', a: { street: 'Atatürk Bulvarı', reportDescription: 'İki araç çarpıştı', subtype: 'ACCIDENT_MAJOR', reliability: 9 }, j: { speedKMH: 33, delay: 390, level: 4, line: [...jam.line, [32.75, 39.916]] }, updA: false, updJ: true },
    ];
    let lastA = T0;
    let lastJ = T0;
    for (const [i, step] of steps.entries()) {
      show([{ ...accident, ...step.a }], [{ ...jam, ...step.j }]);
      const s = await scanAt(i + 1);
      const now = h.clock.now();
      if (step.updA) lastA = now;
      if (step.updJ) lastJ = now;
      const a = h.event('waze', 'acc-1')!;
      const j = h.event('waze', '9001')!;
      const label = `step ${i + 1}: ${step.name}`;
      if (i === 1) {
        // Silent refreshes still land: the point moved and the confidence fell without an update.
        expect(a.lat).toBeCloseTo(accident.lat + 0.0003, 6);
        expect(a.confidence).toBeLessThan(h.changes().map((c) => JSON.parse(c.payload) as { id: string; confidence: number }).find((e) => e.id === a.id)!.confidence);
        // …while the stored jam details stay those last published.
        expect(j.jam).toEqual({ speed_kmh: 15, length_m: 1200, delay_s: 200, level: 3 });
      }
      expect({ label, updated: s.updated, created: s.created, cleared: s.cleared }).toEqual({ label, updated: Number(step.updA) + Number(step.updJ), created: 0, cleared: 0 });
      expect({ label, a: [a.firstSeenAt, a.lastSeenAt, a.updatedAt], j: [j.firstSeenAt, j.lastSeenAt, j.updatedAt] }).toEqual({ label, a: [T0, now, lastA], j: [T0, now, lastJ] });
      for (const [id, upd, row] of [['acc-1', step.updA, a], ['9001', step.updJ, j]] as const) {
        const last = changesOf(id).at(-1)!;
        if (upd) {
          expect({ label, change: last.change, at: last.at, scanId: last.scanId }).toEqual({ label, change: 'updated', at: now, scanId: s.id });
          expect(JSON.parse(last.payload)).toEqual(toApiEvent(row));
        } else expect({ label, at: last.at === now }).toEqual({ label, at: false });
      }
    }
    expect(h.event('waze', '9001')!.jam).toEqual({ speed_kmh: 33, length_m: 1200, delay_s: 390, level: 4 });
    expect(h.changes().length).toBe(2 + steps.filter((s) => s.updA).length + steps.filter((s) => s.updJ).length);
  });
});

describe('clearing', () => {
  test('not after one missed scan; exactly after the second consecutive successful one', async () => {
    show([accident]);
    await scanAt(0);
    show([]);
    const first = await scanAt(1);
    expect(first).toMatchObject({ status: 'ok', cleared: 0 });
    expect(h.event('waze', 'acc-1')).toMatchObject({ status: 'active', missedScans: 1, clearedAt: null, updatedAt: T0, lastSeenAt: T0 });
    expect(changesOf('acc-1').map((c) => c.change)).toEqual(['created']);

    const second = await scanAt(2);
    const at = T0 + 2 * STEP;
    expect(second).toMatchObject({ status: 'ok', cleared: 1 });
    const row = h.event('waze', 'acc-1')!;
    expect(row).toMatchObject({ status: 'cleared', clearedAt: at, updatedAt: at, lastSeenAt: T0, firstSeenAt: T0, missedScans: 2 });
    const last = changesOf('acc-1').at(-1)!;
    expect(last).toMatchObject({ change: 'cleared', at, scanId: second.id });
    expect(JSON.parse(last.payload)).toEqual(toApiEvent(row));
    expect(JSON.parse(last.payload)).toMatchObject({ status: 'cleared', cleared_at: new Date(at).toISOString().replace('.000', '') });
    expect(h.runs().at(-1)).toMatchObject({ status: 'ok', cleared: 1 });

    // A cleared event is not cleared again.
    expect((await scanAt(3)).cleared).toBe(0);
    expect(changesOf('acc-1')).toHaveLength(2);
  });

  test('a failed scan in between counts for nothing: miss, fail, miss clears on the third', async () => {
    show([accident]);
    await scanAt(0);
    show([]);
    await scanAt(1);
    world.override('waze', 'ank', { status: 500, json: {} });
    world.override('waze', 'ist', { status: 500, json: {} });
    expect(await scanAt(2)).toMatchObject({ status: 'failed', cleared: 0 });
    expect(h.event('waze', 'acc-1')).toMatchObject({ status: 'active', missedScans: 1 });
    // Partial: the event's own cell failed, another cell was fine. Still nothing.
    world.override('waze', 'ist', null);
    expect(await scanAt(3)).toMatchObject({ status: 'partial', cleared: 0 });
    expect(h.event('waze', 'acc-1')).toMatchObject({ status: 'active', missedScans: 1 });
    world.override('waze', 'ank', null);
    expect(await scanAt(4)).toMatchObject({ status: 'ok', cleared: 1 });
    expect(h.event('waze', 'acc-1')).toMatchObject({ status: 'cleared', clearedAt: T0 + 4 * STEP });
  });

  test('a sighting between two misses resets the count', async () => {
    show([accident]);
    await scanAt(0);
    show([]);
    await scanAt(1);
    show([accident]);
    await scanAt(2);
    expect(h.event('waze', 'acc-1')).toMatchObject({ status: 'active', missedScans: 0, lastSeenAt: T0 + 2 * STEP });
    show([]);
    await scanAt(3);
    expect(h.event('waze', 'acc-1')).toMatchObject({ status: 'active', missedScans: 1 });
    await scanAt(4);
    expect(h.event('waze', 'acc-1')).toMatchObject({ status: 'cleared', clearedAt: T0 + 4 * STEP });
  });

  test('reappearing after being cleared: the same event, active again, first_seen_at kept, an "updated" change', async () => {
    show([accident]);
    await scanAt(0);
    show([]);
    await scanAt(1);
    await scanAt(2);
    expect(h.event('waze', 'acc-1')!.status).toBe('cleared');
    show([accident]);
    const s = await scanAt(3);
    const at = T0 + 3 * STEP;
    expect(s).toMatchObject({ created: 0, updated: 1, cleared: 0 });
    const row = h.event('waze', 'acc-1')!;
    expect(row).toMatchObject({ status: 'active', clearedAt: null, firstSeenAt: T0, lastSeenAt: at, updatedAt: at, missedScans: 0 });
    expect(h.events()).toHaveLength(1);
    const all = changesOf('acc-1');
    expect(all.map((c) => c.change)).toEqual(['created', 'cleared', 'updated']);
    expect(JSON.parse(all[2]!.payload)).toMatchObject({ status: 'active', cleared_at: null });
    // And it can clear again.
    show([]);
    await scanAt(4);
    await scanAt(5);
    expect(changesOf('acc-1').map((c) => c.change)).toEqual(['created', 'cleared', 'updated', 'cleared']);
  });

  test('the outbox holds exactly one row per created, updated and cleared event of each scan', async () => {
    const others = Array.from({ length: 5 }, (_, i) => ({ ...accident, uuid: `o-${i}`, lat: accident.lat + i * 0.001 }));
    show([accident, ...others]);
    await scanAt(0);
    show([{ ...accident, street: 'Yeni Yol' }, ...others.slice(0, 3), { ...accident, uuid: 'n-1', lat: 39.93 }]);
    await scanAt(1);
    const third = await scanAt(2);
    for (const run of h.runs()) {
      const rows = h.changes().filter((c) => c.scanId === run.id);
      const count = (k: string) => rows.filter((c) => c.change === k).length;
      expect({ id: run.id, created: count('created'), updated: count('updated'), cleared: count('cleared') }).toEqual({ id: run.id, created: run.created, updated: run.updated, cleared: run.cleared });
    }
    expect(third).toMatchObject({ created: 0, updated: 0, cleared: 2 });
    expect(h.runs().map((r) => [r.created, r.updated, r.cleared])).toEqual([
      [6, 0, 0],
      [1, 1, 0],
      [0, 0, 2],
    ]);
  });
});

describe('retention (purgeOld)', () => {
  test('events, outbox rows and scan records older than HISTORY_DAYS go; recent ones and running scans stay', async () => {
    const DAY = 24 * 3600_000;
    const now = T0;
    const old = now - 91 * DAY;
    const recent = now - 89 * DAY;
    const rows = [
      ...Array.from({ length: 2300 }, (_, i) => eventRow({ id: `evt_old_${i}`, status: 'cleared', lastSeenAt: old, firstSeenAt: old, updatedAt: old, clearedAt: old + 180_000 }, now)),
      eventRow({ id: 'evt_old_active', lastSeenAt: old, firstSeenAt: old }, now), // its cells kept failing for 90 days
      eventRow({ id: 'evt_cleared_recently', status: 'cleared', lastSeenAt: old, firstSeenAt: old, clearedAt: recent }, now),
      eventRow({ id: 'evt_recent', lastSeenAt: recent, firstSeenAt: old }, now),
      eventRow({ id: 'evt_live', lastSeenAt: now - 60_000 }, now),
    ];
    insertEvents(h.db.db, rows);
    h.db.db.insert(eventChanges).values([
      ...Array.from({ length: 1500 }, (_, i) => ({ eventId: `evt_old_${i}`, change: 'created' as const, at: old, scanId: 1, payload: '{}' })),
      { eventId: 'evt_live', change: 'created', at: recent, scanId: 2, payload: '{}' },
    ]).run();
    const run = (startedAt: number, status: 'ok' | 'running' | 'failed') => ({ startedAt, finishedAt: status === 'running' ? null : startedAt + 5000, status, sources: {}, errors: [] });
    h.db.db.insert(scanRuns).values([run(old, 'ok'), run(old + 1000, 'failed'), run(old + 2000, 'running'), run(recent, 'ok'), run(now - 90_000, 'ok')]).run();

    let pauses = 0;
    const purged = await purgeOld(h.writer.sqlite, now, 90, async () => {
      pauses++;
    });
    expect(purged).toEqual({ events: 2301, changes: 1500, scans: 2 });
    expect(pauses).toBeGreaterThanOrEqual(3); // batches of 1000 with a pause between
    expect(h.db.db.select({ id: events.id }).from(events).all().map((r) => r.id).sort()).toEqual(['evt_cleared_recently', 'evt_live', 'evt_recent']);
    expect(h.db.db.select().from(eventChanges).all().map((c) => c.eventId)).toEqual(['evt_live']);
    expect(h.runs().map((r) => r.status)).toEqual(['running', 'ok', 'ok']);
    expect(await purgeOld(h.writer.sqlite, now, 90)).toEqual({ events: 0, changes: 0, scans: 0 });
  });

  test('HISTORY_DAYS is honoured: with 1 day, yesterday-morning events go', async () => {
    insertEvents(h.db.db, [eventRow({ id: 'evt_a', lastSeenAt: T0 - 25 * 3600_000, firstSeenAt: T0 - 26 * 3600_000 }, T0), eventRow({ id: 'evt_b', lastSeenAt: T0 - 23 * 3600_000 }, T0)]);
    expect((await purgeOld(h.writer.sqlite, T0, 1)).events).toBe(1);
    expect(h.events().map((e) => e.id)).toEqual(['evt_b']);
  });
});

describe('markInterruptedScans', () => {
  test("marks 'running' runs failed with a reason, leaves finished ones and respects startedBefore", async () => {
    const insert = (startedAt: number, status: 'running' | 'ok') =>
      h.db.db.insert(scanRuns).values({ startedAt, finishedAt: status === 'ok' ? startedAt + 1000 : null, status, sources: {}, errors: [] }).returning({ id: scanRuns.id }).get().id;
    const done = insert(T0 - 10 * STEP, 'ok');
    const old = insert(T0 - 5 * STEP, 'running');
    const young = insert(T0 - 10_000, 'running');
    expect(markInterruptedScans(h.writer.sqlite, T0, T0 - STEP)).toBe(1);
    expect(h.runs().map((r) => [r.id, r.status])).toEqual([
      [done, 'ok'],
      [old, 'failed'],
      [young, 'running'],
    ]);
    expect(h.runs()[1]).toMatchObject({ finishedAt: T0, errors: ['interrupted: the process stopped during this scan'] });
    expect(markInterruptedScans(h.writer.sqlite, T0 + 1)).toBe(1);
    expect(h.runs()[2]).toMatchObject({ status: 'failed', finishedAt: T0 + 1 });
    expect(markInterruptedScans(h.writer.sqlite, T0 + 2)).toBe(0);
  });
});

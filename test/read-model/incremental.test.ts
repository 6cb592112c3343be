import { afterEach, beforeEach, expect, test } from 'bun:test';
import { silentLogger } from '../../src/log.ts';
import { sqliteWindowSource } from '../../src/read-model/load-window.ts';
import type { ListQuery } from '../../src/read-model/query.ts';
import { ReadModel } from '../../src/read-model/read-model.ts';
import { runScan } from '../../src/scanner/scan.ts';
import type { NormalizedItem } from '../../src/domain/event.ts';
import type { Source } from '../../src/scanner/sources/source.ts';
import { tempDb, type TempDb } from '../helpers/db.ts';

let t: TempDb;
let now: number;
let items: NormalizedItem[];
const clock = () => now;

// A source that answers one cell with whatever `items` holds: the scanner and SQLite are real.
const source: Source = {
  name: 'waze',
  concurrency: 1,
  fetchCell: async () => ({ ok: true, items: items.map((i) => ({ ...i })), requests: 1 }),
  status: () => ({ name: 'waze', state: 'ok', until: null, reason: null }),
};
const scan = () => runScan({ writer: t.sqlite, sources: [source], cells: [{ id: 'c172a', bbox: [28.6, 40.8, 29.1, 41.4] }], clock, logger: silentLogger, pause: async () => {} });

function item(id: string, over: Partial<NormalizedItem> = {}): NormalizedItem {
  return {
    source: 'waze', sourceId: id, type: 'accident', subtype: null, severity: 'minor', location: { lat: 41.0082, lon: 28.9784 },
    geometry: null, road: 'Barbaros Bulvarı', district: 'Beşiktaş', description: 'Sağ şerit kapalı', jam: null, reportedAt: now - 60_000, confidence: 0.5, ...over,
  };
}

const all: ListQuery = { plate: null, limit: 1000, cursor: null, types: null, severities: null, bbox: null, near: null, updatedSince: null, format: 'json' };
async function list(rm: ReadModel): Promise<Record<string, { last_seen_at: string; location: { lat: number }; confidence: number; road: string; updated_at: string }>> {
  const page = rm.listPage({ path: '/api/v1/events', rawQuery: `v=${rm.version}`, params: () => new URLSearchParams(`v=${rm.version}`), query: all, city: null });
  const body = JSON.parse(await page.body.blob.text());
  return Object.fromEntries(body.data.map((e: { source: { id: string } }) => [e.source.id, e]));
}

beforeEach(() => {
  t = tempDb();
  now = Date.parse('2026-11-21T10:00:00Z');
});
afterEach(() => t.cleanup());

test('an event only seen again keeps its bytes with last_seen_at patched; one that changed is rebuilt', async () => {
  items = [item('a'), item('b'), item('c')];
  await scan();
  const rm = new ReadModel(sqliteWindowSource(t.sqlite), clock, 90);
  const first = await list(rm);
  expect(first.a!.last_seen_at).toBe('2026-11-21T10:00:00Z');

  now += 90_000;
  // a: seen again; b: a silent change (moved point, new confidence); c: a material change.
  items = [item('a'), item('b', { location: { lat: 41.01, lon: 28.98 }, confidence: 0.9 }), item('c', { road: 'D100' })];
  await scan();
  const revs = Object.fromEntries(t.sqlite.query<{ source_id: string; rev: number }, []>('SELECT source_id, rev FROM events').all().map((r) => [r.source_id, r.rev]));
  expect(revs).toEqual({ a: 0, b: 1, c: 1 });
  await rm.refreshAsync(async () => {});
  const second = await list(rm);
  expect(second.a).toEqual({ ...first.a!, last_seen_at: '2026-11-21T10:01:30Z' });
  expect(second.b!.location.lat).toBe(41.01);
  expect(second.b!.confidence).toBe(0.9);
  expect(second.b!.updated_at).toBe(first.b!.updated_at); // silent: not an update for clients
  expect(second.c!.road).toBe('D100');
  expect(second.c!.updated_at).toBe('2026-11-21T10:01:30Z');
});

test('pages serve whole snapshots: the 24-hour view agrees with a from-scratch rebuild after many scans', async () => {
  const rm = new ReadModel(sqliteWindowSource(t.sqlite), clock, 90);
  for (let s = 0; s < 6; s++) {
    items = Array.from({ length: 40 }, (_, i) => item(`e${(i + s * 7) % 60}`, { severity: i % 3 === 0 ? 'major' : 'minor', reportedAt: now - i * 1000 }));
    await scan();
    await rm.refreshAsync(async () => {});
    now += 90_000;
  }
  const fresh = new ReadModel(sqliteWindowSource(t.sqlite), clock, 90);
  expect(await list(rm)).toEqual(await list(fresh));
  expect(rm.activeCount).toBe(fresh.activeCount);
});

test('a refresh asked for while another is under way runs again after it, so it sees the newer data', async () => {
  items = [item('a')];
  await scan();
  const rm = new ReadModel(sqliteWindowSource(t.sqlite), clock, 90);
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  const slow = rm.refreshAsync(() => gate);
  items = [item('a'), item('b')];
  now += 90_000;
  await scan();
  const after = rm.refreshAsync(async () => {});
  release();
  await Promise.all([slow, after]);
  expect(Object.keys(await list(rm)).sort()).toEqual(['a', 'b']);
});

test('an event read both as active and as cleared (a scan committed between the two reads) appears once', async () => {
  items = [item('a'), item('b')];
  await scan();
  const source = sqliteWindowSource(t.sqlite);
  // The cleared heads are read after the active ones; clear 'a' in between, as a scan would.
  const racing: typeof source = {
    ...source,
    *heads(since, chunk) {
      let phase = 0;
      for (const c of source.heads(since, chunk)) {
        yield c;
        if (phase++ === 0) t.sqlite.exec(`UPDATE events SET status = 'cleared', cleared_at = ${now}, updated_at = ${now}, rev = rev + 1 WHERE source_id = 'a'`);
      }
    },
  };
  const rm = new ReadModel(racing, clock, 90);
  const page = rm.listPage({ path: '/x', rawQuery: 'u', params: () => new URLSearchParams(), query: { ...all, updatedSince: now - 1000 }, city: null });
  const ids = JSON.parse(await page.body.blob.text()).data.map((e: { source: { id: string } }) => e.source.id);
  expect(ids.sort()).toEqual(['a', 'b']);
  expect(rm.activeCount).toBe(1);
});

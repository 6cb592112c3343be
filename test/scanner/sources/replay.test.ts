import { afterAll, describe, expect, test } from 'bun:test';
import { copyFile, mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseRecording, ReplaySource } from '../../../src/scanner/sources/replay.ts';
import type { Cell } from '../../../src/scanner/sources/source.ts';
import { fixturePath } from '../../helpers/fake-upstream.ts';

const roots: string[] = [];
afterAll(async () => {
  for (const r of roots) await rm(r, { recursive: true, force: true });
});

async function replayDir(files: Record<string, string>): Promise<string> {
  const root = await mkdtemp(join(tmpdir(), 'trafik-replay-'));
  roots.push(root);
  for (const kind of ['waze', 'tomtom', 'here']) await mkdir(join(root, kind));
  for (const [rel, fixture] of Object.entries(files)) await copyFile(fixturePath(fixture), join(root, rel));
  return root;
}

const ISTANBUL: Cell = { id: 'ist', bbox: [28.5, 40.8, 29.5, 41.3] };
const ANKARA: Cell = { id: 'ank', bbox: [32.3, 39.6, 33.2, 40.2] };
const SANTIAGO: Cell = { id: 'scl', bbox: [-71, -34, -70, -33] };

describe('ReplaySource', () => {
  test('serves each kind with the live parsers, filtered by cell, source replay, ids prefixed', async () => {
    const dir = await replayDir({
      'waze/istanbul.json': 'synthetic-waze-georss-istanbul.json',
      'waze/santiago.json': 'waze-georss-santiago.json',
      'tomtom/ankara.json': 'synthetic-tomtom-v5-ankara.json',
      'here/istanbul.json': 'synthetic-here-v7-incidents-istanbul.json',
    });
    const s = new ReplaySource({ dir });
    expect(s.name).toBe('replay');

    const ist = await s.fetchCell(ISTANBUL);
    expect(ist.ok).toBe(true);
    if (!ist.ok) return;
    expect(ist.requests).toBe(0);
    const ids = ist.items.map((i) => i.sourceId).sort();
    expect(ids).toEqual(
      [
        'waze:c2a1e0f4-3b7d-4e21-9a55-0d6b8f2e7c19',
        'waze:5be8d6a2-91c4-4f0e-b7d3-2a9e6c1f0b84',
        'waze:e91f47b3-0c2d-4a6e-8f15-7b3c9d2e4a60',
        'waze:7f3c2d1e-8a4b-4c6d-9e0f-1a2b3c4d5e6f',
        'waze:1390247715',
        'waze:1390251022',
        'here:3218845120077341902',
        'here:2291770345118006441',
        'here:4120098833217765001',
        'here:2760013398455120007',
      ].sort(),
    );
    for (const i of ist.items) expect(i.source).toBe('replay');
    const closure = ist.items.find((i) => i.sourceId === 'waze:7f3c2d1e-8a4b-4c6d-9e0f-1a2b3c4d5e6f');
    expect(closure?.type).toBe('road_closure');
    expect(closure?.geometry?.coordinates).toHaveLength(3);

    const ank = await s.fetchCell(ANKARA);
    expect(ank.ok && ank.items.map((i) => i.sourceId.split(':')[0])).toEqual(Array(5).fill('tomtom'));
    const scl = await s.fetchCell(SANTIAGO);
    expect(scl.ok && scl.items).toHaveLength(13);
    expect(s.status()).toEqual({ name: 'replay', state: 'ok', until: null, reason: null });
  });

  test('half-open cells: a point on a shared edge lands in exactly one cell', async () => {
    const dir = await replayDir({});
    const alert = (uuid: string, x: number, y: number) => ({
      uuid,
      type: 'ACCIDENT',
      subtype: 'ACCIDENT_MINOR',
      location: { x, y },
      reliability: 9,
      pubMillis: 1,
    });
    await writeFile(
      join(dir, 'waze', 'edges.json'),
      JSON.stringify({ alerts: [alert('edge', 29, 41), alert('inside', 28.5, 40.5)] }),
    );
    const s = new ReplaySource({ dir });
    const cells: Cell[] = [
      { id: 'sw', bbox: [28, 40, 29, 41] },
      { id: 'se', bbox: [29, 40, 30, 41] },
      { id: 'nw', bbox: [28, 41, 29, 42] },
      { id: 'ne', bbox: [29, 41, 30, 42] },
    ];
    const got: Record<string, string[]> = {};
    for (const c of cells) {
      const r = await s.fetchCell(c);
      got[c.id] = r.ok ? r.items.map((i) => i.sourceId) : [];
    }
    expect(got).toEqual({ sw: ['waze:inside'], se: [], nw: [], ne: ['waze:edge'] });
  });

  test('a changed, added or removed recording shows at the next scan', async () => {
    const dir = await replayDir({ 'waze/a.json': 'synthetic-waze-georss-istanbul.json' });
    const s = new ReplaySource({ dir });
    const first = await s.fetchCell(ISTANBUL);
    expect(first.ok && first.items).toHaveLength(6);

    // The operator clears the accident and adds a TomTom recording for Ankara.
    const payload = JSON.parse(await Bun.file(join(dir, 'waze', 'a.json')).text()) as { alerts: { type: string }[] };
    payload.alerts = payload.alerts.filter((a) => a.type !== 'ACCIDENT');
    await writeFile(join(dir, 'waze', 'a.json'), JSON.stringify(payload));
    await copyFile(fixturePath('synthetic-tomtom-v5-ankara.json'), join(dir, 'tomtom', 'b.json'));

    const second = await s.fetchCell(ISTANBUL);
    expect(second.ok && second.items).toHaveLength(5);
    expect(second.ok && second.items.some((i) => i.type === 'accident')).toBe(false);
    const ank = await s.fetchCell(ANKARA);
    expect(ank.ok && ank.items).toHaveLength(5);

    await rm(join(dir, 'tomtom', 'b.json'));
    const gone = await s.fetchCell(ANKARA);
    expect(gone.ok && gone.items).toEqual([]);
  });

  test('a malformed file is reported; the other files are still served', async () => {
    const dir = await replayDir({ 'here/good.json': 'synthetic-here-v7-incidents-istanbul.json' });
    await writeFile(join(dir, 'here', 'bad.json'), '{"results": [ {"location": ');
    await writeFile(join(dir, 'waze', 'array.json'), '[1, 2, 3]');
    await writeFile(join(dir, 'waze', 'notes.txt'), 'ignored: not .json');
    const s = new ReplaySource({ dir });
    const r = await s.fetchCell(ISTANBUL);
    expect(r.ok && r.items).toHaveLength(4);
    expect(s.fileErrors()).toEqual([
      'waze/array.json: not a JSON object',
      expect.stringContaining('here/bad.json: malformed or truncated JSON') as unknown as string,
    ]);
    expect(s.status().state).toBe('ok');
    expect(s.status().reason).toContain('here/bad.json');

    // Fixed by the operator: the error goes away.
    await writeFile(join(dir, 'here', 'bad.json'), '{"results": []}');
    await rm(join(dir, 'waze', 'array.json'));
    await s.fetchCell(ISTANBUL);
    expect(s.fileErrors()).toEqual([]);
    expect(s.status().reason).toBeNull();
  });

  test('a file broken by an edit keeps serving its last good version until it is fixed or removed', async () => {
    const dir = await replayDir({ 'here/live.json': 'synthetic-here-v7-incidents-istanbul.json' });
    const s = new ReplaySource({ dir });
    const good = await s.fetchCell(ISTANBUL);
    expect(good.ok && good.items).toHaveLength(4);

    // Caught mid-write: the events stay (they would otherwise clear two scans later).
    await writeFile(join(dir, 'here', 'live.json'), '{"results": [ {"loc');
    const broken = await s.fetchCell(ISTANBUL);
    expect(broken.ok && broken.items.map((i) => i.sourceId)).toEqual(good.ok ? good.items.map((i) => i.sourceId) : []);
    expect(s.fileErrors()).toEqual([expect.stringMatching(/^here\/live\.json: malformed or truncated JSON .*; serving its last good version$/) as unknown as string]);
    // Broken again in another way: still the last good version.
    await writeFile(join(dir, 'here', 'live.json'), '[]');
    const again = await s.fetchCell(ISTANBUL);
    expect(again.ok && again.items).toHaveLength(4);

    // Removed while broken: its last good items go with it.
    await rm(join(dir, 'here', 'live.json'));
    const gone = await s.fetchCell(ISTANBUL);
    expect(gone.ok && gone.items).toEqual([]);
    expect(s.fileErrors()).toEqual([]);

    // Back and fixed: the new content is served; broken then, there is no good version to keep.
    await writeFile(join(dir, 'here', 'live.json'), '{"results": []}');
    const fixed = await s.fetchCell(ISTANBUL);
    expect(fixed.ok && fixed.items).toEqual([]);
    expect(s.fileErrors()).toEqual([]);
    await writeFile(join(dir, 'here', 'live.json'), '{"results": [ {"loc');
    expect((await s.fetchCell(ISTANBUL)).ok).toBe(true);
    expect(s.fileErrors()[0]).not.toContain('last good version');
  });

  test('a file that becomes unreadable keeps its last good version', async () => {
    const dir = await replayDir({ 'here/live.json': 'synthetic-here-v7-incidents-istanbul.json' });
    const s = new ReplaySource({ dir });
    expect((await s.fetchCell(ISTANBUL)).ok).toBe(true);
    // A symlink to itself: listed, but stat fails with ELOOP (a permission error would not stop root).
    await rm(join(dir, 'here', 'live.json'));
    await symlink('live.json', join(dir, 'here', 'live.json'));
    const r = await s.fetchCell(ISTANBUL);
    expect(r.ok && r.items).toHaveLength(4);
    expect(s.fileErrors()).toEqual([expect.stringMatching(/^here\/live\.json: unreadable \(ELOOP\); serving its last good version$/) as unknown as string]);
  });

  test('a missing directory fails every cell with a clear error', async () => {
    const s = new ReplaySource({ dir: join(tmpdir(), 'trafik-replay-does-not-exist-42') });
    const r = await s.fetchCell(ISTANBUL);
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.kind).toBe('network');
    expect(r.error).toContain('trafik-replay-does-not-exist-42');
    expect(r.error).toContain('missing or unreadable');
    expect(r.requests).toBe(0);
  });

  test('a directory without kind folders is an empty, healthy replay', async () => {
    const root = await mkdtemp(join(tmpdir(), 'trafik-replay-empty-'));
    roots.push(root);
    const r = await new ReplaySource({ dir: root }).fetchCell(ISTANBUL);
    expect(r).toEqual({ ok: true, items: [], requests: 0 });
  });

  test('concurrent cells share one directory pass', async () => {
    const dir = await replayDir({ 'waze/a.json': 'waze-georss-santiago.json' });
    const s = new ReplaySource({ dir });
    const results = await Promise.all([s.fetchCell(SANTIAGO), s.fetchCell(SANTIAGO), s.fetchCell(ISTANBUL)]);
    expect(results.map((r) => (r.ok ? r.items.length : -1))).toEqual([13, 13, 0]);
  });
});

describe('parseRecording', () => {
  test('prefixes ids and marks the source', () => {
    const r = parseRecording('tomtom', JSON.stringify({ incidents: [] }));
    expect(r).toEqual({ items: [], error: null });
    const bad = parseRecording('waze', 'nope');
    expect(bad.error).toContain('malformed');
  });
});

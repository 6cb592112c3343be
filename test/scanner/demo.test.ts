/**
 * The offline demo: demo/replay holds synthetic Turkish recordings in the real upstream schemas.
 * One scan over it must show all four types in several provinces through the API; the files must
 * be what scripts/make-demo.ts writes; `bun scripts/demo.ts` must serve them.
 */
import { afterEach, expect, test } from 'bun:test';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { StatsBody } from '../../src/read-model/read-model.ts';
import { GRID_CELLS } from '../../src/scanner/grid/index.ts';
import { ReplaySource } from '../../src/scanner/sources/replay.ts';
import { testApp } from '../helpers/app.ts';
import { scanHarnessOn, type ScanHarness } from '../helpers/scan.ts';

const ROOT = join(import.meta.dir, '..', '..');
const DEMO = join(ROOT, 'demo', 'replay');
const NAMED = ['istanbul', 'ankara', 'izmir', 'bursa', 'antalya', 'kocaeli', 'konya', 'gaziantep', 'adana'];

let h: ScanHarness | undefined;
const dirs: string[] = [];
afterEach(() => {
  h?.cleanup();
  h = undefined;
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

test('one scan over demo/replay: all four types in at least 8 provinces, through the API', async () => {
  const t = await testApp({ now: Date.UTC(2026, 10, 21, 7, 0) });
  h = scanHarnessOn(t);
  const replay = new ReplaySource({ dir: DEMO });
  const s = await h.scan([replay], GRID_CELLS);
  expect(s).toMatchObject({ status: 'ok', cellsFailed: 0, outsideTurkey: 0, errors: [] });
  expect(replay.fileErrors()).toEqual([]);
  expect(s.created).toBeGreaterThanOrEqual(100);

  const { readModel, app } = t;
  readModel.refresh();
  const stats = (await (await app.handle(new Request('http://localhost/api/v1/stats?top=81'))).json()) as StatsBody;
  expect(stats.total).toBe(s.created);
  for (const n of Object.values(stats.by_type)) expect(n).toBeGreaterThanOrEqual(5);
  expect(stats.top_cities.length).toBeGreaterThanOrEqual(8);
  const slugs = stats.top_cities.map((c) => c.city.slug);
  for (const slug of NAMED) expect(slugs).toContain(slug);
  // Several provinces each show more than one type.
  expect(stats.top_cities.filter((c) => Object.values(c.by_type).filter((n) => n > 0).length >= 3).length).toBeGreaterThanOrEqual(8);

  const page = (await (await app.handle(new Request('http://localhost/api/v1/events/izmir?limit=1000'))).json()) as { data: { city: { slug: string }; type: string; source: { name: string; id: string } }[] };
  expect(page.data.length).toBeGreaterThan(5);
  expect(page.data.every((e) => e.city.slug === 'izmir' && e.source.name === 'replay')).toBe(true);
  // İzmir has both Waze and HERE recordings.
  expect(new Set(page.data.map((e) => e.source.id.split(':')[0]))).toEqual(new Set(['waze', 'here']));
  const health = (await (await app.handle(new Request('http://localhost/api/v1/health'))).json()) as { status: string };
  expect(health.status).toBe('pass');
});

test('demo/replay is exactly what scripts/make-demo.ts writes (deterministic, regenerable)', async () => {
  const out = mkdtempSync(join(tmpdir(), 'trafik-demo-'));
  dirs.push(out);
  const proc = Bun.spawnSync(['bun', join(ROOT, 'scripts', 'make-demo.ts'), out], { cwd: ROOT });
  expect(proc.exitCode).toBe(0);
  for (const kind of ['waze', 'tomtom', 'here']) {
    const names = readdirSync(join(DEMO, kind)).sort();
    expect(readdirSync(join(out, kind)).sort()).toEqual(names);
    for (const n of names) expect({ n, same: readFileSync(join(out, kind, n)).equals(readFileSync(join(DEMO, kind, n))) }).toEqual({ n, same: true });
  }
});

test('bun scripts/demo.ts serves the demo on the replay source and stops cleanly on Ctrl-C', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'trafik-demo-run-'));
  dirs.push(dir);
  const proc = Bun.spawn(['bun', join(ROOT, 'scripts', 'demo.ts')], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', PORT: '0', DATABASE_PATH: join(dir, 'demo.db'), SOURCES: 'waze' },
    stdout: 'pipe',
    stderr: 'pipe',
  });
  try {
    const reader = proc.stdout.getReader();
    const decoder = new TextDecoder();
    let out = '';
    const deadline = Date.now() + 10_000;
    while (!/scan 1: /.test(out) && Date.now() < deadline) {
      const { value, done } = await reader.read();
      if (done) break;
      out += decoder.decode(value, { stream: true });
    }
    expect(out).toMatch(/scan 1: ok, \d+ items, created \d+/);
    const base = /trafik demo — (http:\/\/127\.0\.0\.1:\d+)/.exec(out)?.[1];
    expect(base).toBeDefined();
    expect(out).toContain(`${base}/api/v1/events/istanbul`);
    // The scan commits in the scanner thread; the served view is swapped in right after it.
    let stats = (await (await fetch(`${base}/api/v1/stats`)).json()) as StatsBody;
    while (stats.total === 0 && Date.now() < deadline) {
      await Bun.sleep(50);
      stats = (await (await fetch(`${base}/api/v1/stats`)).json()) as StatsBody;
    }
    expect(Object.values(stats.by_type).every((n) => n > 0)).toBe(true);
    expect(stats.top_cities.length).toBeGreaterThanOrEqual(8);

    proc.kill('SIGINT');
    while (Date.now() < deadline + 5000) {
      const { value, done } = await reader.read();
      if (done) break;
      out += decoder.decode(value, { stream: true });
    }
    expect(await proc.exited).toBe(0);
    expect(out).toContain('info: stopped {"signal":"SIGINT"}');
  } finally {
    if (proc.exitCode === null) proc.kill('SIGKILL');
  }
});

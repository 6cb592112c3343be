import { afterAll, beforeAll, expect, test } from 'bun:test';
import { Database } from 'bun:sqlite';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

// Builds the real executable once, copies it alone into an empty folder and runs it there with the
// replay source over a local recording, so nothing reaches the internet.
const root = join(import.meta.dir, '..');
const work = mkdtempSync(join(tmpdir(), 'trafik-bin-'));
const bin = join(work, 'build', 'trafik');
const empty = join(work, 'empty');
const replay = join(work, 'replay');
let proc: ReturnType<typeof Bun.spawn> | null = null;
let base = '';
let stdout = '';

async function waitForLine(reader: ReadableStreamDefaultReader<Uint8Array>, pattern: RegExp, ms: number): Promise<RegExpMatchArray> {
  const deadline = Date.now() + ms;
  const dec = new TextDecoder();
  while (Date.now() < deadline) {
    const m = stdout.match(pattern);
    if (m) return m;
    const chunk = await Promise.race([reader.read(), Bun.sleep(deadline - Date.now()).then(() => null)]);
    if (chunk === null || chunk.done) break;
    stdout += dec.decode(chunk.value);
  }
  const m = stdout.match(pattern);
  if (!m) throw new Error(`timed out waiting for ${pattern}; output so far:\n${stdout}`);
  return m;
}

let reader: ReadableStreamDefaultReader<Uint8Array>;

beforeAll(async () => {
  const build = Bun.spawnSync(['bun', 'scripts/build.ts', bin], { cwd: root, stderr: 'pipe', stdout: 'pipe' });
  if (build.exitCode !== 0) throw new Error(`build failed: ${build.stderr.toString()}`);
  mkdirSync(empty, { recursive: true });
  copyFileSync(bin, join(empty, 'trafik'));
  mkdirSync(join(replay, 'waze'), { recursive: true });
  copyFileSync(join(root, 'test/fixtures/upstream/synthetic-waze-georss-istanbul.json'), join(replay, 'waze', 'istanbul.json'));
  proc = Bun.spawn([join(empty, 'trafik')], {
    cwd: empty,
    env: { PATH: process.env.PATH ?? '', PORT: '0', HOST: '127.0.0.1', SOURCES: 'replay', REPLAY_DIR: replay, SCAN_INTERVAL_SECONDS: '3600' },
    stdout: 'pipe',
    stderr: 'pipe',
  });
  reader = (proc.stdout as ReadableStream<Uint8Array>).getReader();
  const m = await waitForLine(reader, /"msg":"listening".*?"port":(\d+)/, 15_000);
  base = `http://127.0.0.1:${m[1]}`;
  await waitForLine(reader, /"msg":"scan finished"/, 15_000);
}, 60_000);

afterAll(() => {
  proc?.kill('SIGKILL');
  rmSync(work, { recursive: true, force: true });
});

test('copied alone into an empty folder, it creates and migrates its database', () => {
  expect(existsSync(join(empty, 'data', 'trafik.db'))).toBe(true);
  const db = new Database(join(empty, 'data', 'trafik.db'), { readonly: true });
  const applied = db.query<{ n: number }, []>('SELECT count(*) AS n FROM __drizzle_migrations').get()!.n;
  const tables = db.query<{ name: string }, []>("SELECT name FROM sqlite_master WHERE type='table'").all().map((r) => r.name);
  db.close();
  expect(applied).toBeGreaterThanOrEqual(1);
  expect(tables).toEqual(expect.arrayContaining(['events', 'event_changes', 'scan_runs', 'api_keys']));
});

test('serves health, events from its first scan, and problem+json errors', async () => {
  const health = await fetch(`${base}/api/v1/health`);
  expect(health.status).toBe(200);
  expect((await health.json()).checks.scanner.last_success_at).toBeString();
  // The scan commits in the scanner thread; the served view is swapped in right after it.
  let events = await fetch(`${base}/api/v1/events/istanbul`);
  let body = await events.json();
  for (const end = Date.now() + 5000; body.data.length === 0 && Date.now() < end; ) {
    await Bun.sleep(50);
    events = await fetch(`${base}/api/v1/events/istanbul`);
    body = await events.json();
  }
  expect(events.status).toBe(200);
  expect(body.data.length).toBeGreaterThan(0);
  expect(body.data.every((e: { city: { plate: number } }) => e.city.plate === 34)).toBe(true);
  const bad = await fetch(`${base}/api/v1/events?limit=abc`);
  expect(bad.status).toBe(400);
  expect(bad.headers.get('content-type')).toBe('application/problem+json');
  // A production build must still answer terse, precise validation problems, never schema dumps.
  expect(JSON.stringify(await bad.json())).not.toContain('schema');
});

test('serves Swagger UI with its own assets and no external URL', async () => {
  const page = await fetch(`${base}/swagger`);
  const html = await page.text();
  expect(page.status).toBe(200);
  expect(html).not.toMatch(/https?:\/\//);
  const scripts = [...html.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1]!);
  expect(scripts).toEqual(expect.arrayContaining(['/swagger/assets/swagger-ui-bundle.js', '/swagger/assets/swagger-ui.css']));
  for (const s of scripts) {
    const r = await fetch(`${base}${s}`);
    expect(r.status).toBe(200);
    expect((await r.arrayBuffer()).byteLength).toBeGreaterThan(10_000);
  }
  const spec = await (await fetch(`${base}/swagger/json`)).json();
  expect(spec.openapi).toMatch(/^3\.1\./);
});

test('embeds the source unminified: the hot hooks read as test/http/sync-path.test.ts checks them', async () => {
  // Minified, `return x;if(` reads to Elysia as a possibly asynchronous call and every request
  // would pay an extra await.
  const text = new TextDecoder('latin1').decode(await Bun.file(bin).bytes());
  for (const hook of ['function limitsGateHook(ctx)', 'function methodGuardHook({ request, set })', 'function requestContextHook({ request, set })']) expect(text).toContain(hook);
});

test('--version, bad configuration, and a graceful SIGTERM', async () => {
  const v = Bun.spawnSync([join(empty, 'trafik'), '--version']);
  expect(v.stdout.toString()).toMatch(/^trafik \d+\.\d+\.\d+/);
  const bad = Bun.spawnSync([join(empty, 'trafik')], { cwd: empty, env: { PATH: process.env.PATH ?? '', PORT: 'eighty' } });
  expect(bad.exitCode).toBe(2);
  expect(bad.stderr.toString().trim().split('\n')).toHaveLength(1);
  expect(bad.stderr.toString()).toContain('PORT');
  proc!.kill('SIGTERM');
  expect(await proc!.exited).toBe(0);
  proc = null;
});

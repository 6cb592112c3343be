#!/usr/bin/env bun
/**
 * Scanner benchmark (the scanner issue's targets). Three processes:
 *   - a fake Waze upstream (Bun.serve on 127.0.0.1) answering the 220 grid cells with 20,000
 *     items in total, pre-serialized so it costs this process nothing;
 *   - this process: the real app (Elysia + read model) listening on 127.0.0.1 and the real
 *     scanner (WazeSource → runScan) on a temp SQLite file, with a 1 ms stall probe;
 *   - an HTTP client hammering GET /api/v1/events and reporting its latencies.
 *
 *   bun bench/scan.ts            run it and print the table
 *   bun bench/scan.ts upstream   (internal) the fake upstream
 *   bun bench/scan.ts client URL (internal) the latency client; stops on "stop" on stdin
 *   bun bench/scan.ts rss DB     (internal) a fresh server process on a database: its RSS
 *
 *   --no-autocheckpoint          the scanner's connection never checkpoints (as if a Worker did
 *                                it): shows what the WAL checkpoint at COMMIT costs the event loop
 *   --chunk=N                    rows written per chunk of the scan transaction (default: runScan's)
 *   --worker                     run runScan in a Worker thread with its own connection (a design
 *                                option, not what `serve` does): the main thread only serves HTTP
 *                                and refreshes the read model
 */
import { parentPort, Worker, workerData } from 'node:worker_threads';
import { openDatabase } from '../src/db/client.ts';
import { silentLogger } from '../src/log.ts';
import { provinceAt } from '../src/provinces/index.ts';
import { GRID_CELLS } from '../src/scanner/grid/index.ts';
import { runScan, type ScanSummary } from '../src/scanner/scan.ts';
import { WazeSource } from '../src/scanner/sources/waze.ts';
import { linePoints, seededRandom, wazeAlert, wazeJam, wazeResponse } from '../scripts/upstream-payloads.ts';
import { testApp, type TestApp } from '../test/helpers/app.ts';

const ITEMS = 20_000;
const WINDOW_EVENTS = 50_000;
const WARMUP_SCANS = 3;
const SELF = import.meta.path;

// ---------------------------------------------------------------------------------------------
// Fake upstream (child process)
// ---------------------------------------------------------------------------------------------

interface Item {
  kind: 'alert' | 'jam';
  id: number;
  lat: number;
  lon: number;
  type: string;
  subtype: string;
  level: number;
  speed: number;
  delay: number;
  street: string;
}

function runUpstream(): void {
  const random = seededRandom(42);
  const perCell = new Map<string, Item[]>();
  let nextId = 1;
  const newItem = (bbox: readonly number[]): Item => {
    const [minLon, minLat, maxLon, maxLat] = bbox as [number, number, number, number];
    let lat = 0;
    let lon = 0;
    for (let tries = 0; tries < 100_000; tries++) {
      lat = minLat + random() * (maxLat - minLat);
      lon = minLon + random() * (maxLon - minLon);
      if (provinceAt(lat, lon) !== null) break;
    }
    const r = random();
    const kind = r < 0.4 ? 'jam' : 'alert';
    const [type, subtype] = r < 0.6 ? ['ACCIDENT', 'ACCIDENT_MINOR'] : r < 0.85 ? ['HAZARD', 'HAZARD_ON_ROAD_POT_HOLE'] : ['ROAD_CLOSED', 'ROAD_CLOSED_CONSTRUCTION'];
    return { kind, id: nextId++, lat, lon, type, subtype, level: 2 + Math.floor(random() * 3), speed: 5 + Math.round(random() * 30), delay: 60 + Math.floor(random() * 600), street: `D${100 + Math.floor(random() * 900)}` };
  };
  GRID_CELLS.forEach((cell, i) => {
    const n = Math.floor(ITEMS / GRID_CELLS.length) + (i < ITEMS % GRID_CELLS.length ? 1 : 0);
    perCell.set(cell.bbox.join(','), Array.from({ length: n }, () => newItem(cell.bbox)));
  });
  const at = Date.now();
  const render = (items: Item[]) =>
    JSON.stringify(
      wazeResponse(
        items.filter((i) => i.kind === 'alert').map((i) => wazeAlert({ uuid: `bench-${i.id}`, type: i.type, subtype: i.subtype, lat: i.lat, lon: i.lon, pubMillis: at - 600_000, street: i.street, city: 'Merkez', reliability: 8, reportDescription: 'Benchmark olayı' })),
        items.filter((i) => i.kind === 'jam').map((i) => wazeJam({ id: i.id, line: linePoints(i.lat, i.lon, 90, 4), level: i.level, speedKMH: i.speed, length: 720, delay: i.delay, pubMillis: at - 300_000, street: i.street, city: 'Merkez' })),
        at,
      ),
    );
  let bodies = new Map<string, string>();
  const build = () => {
    bodies = new Map([...perCell].map(([k, items]) => [k, render(items)]));
  };
  build();
  const server = Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    fetch(req) {
      const url = new URL(req.url);
      if (url.pathname === '/rotate') {
        // The next scan's map: 5 % of the items gone, as many new ones, 10 % of jams slower.
        for (const [k, items] of perCell) {
          const bbox = k.split(',').map(Number);
          const kept = items.filter(() => random() >= 0.05);
          while (kept.length < items.length) kept.push(newItem(bbox));
          for (const i of kept) if (i.kind === 'jam' && random() < 0.1) i.speed = Math.max(1, i.speed - 10);
          perCell.set(k, kept);
        }
        build();
        return new Response('ok');
      }
      const q = url.searchParams;
      const key = [q.get('left'), q.get('bottom'), q.get('right'), q.get('top')].join(',');
      const body = bodies.get(key);
      if (body === undefined) return new Response(`{"error":"unknown bbox ${key}"}`, { status: 400, headers: { 'content-type': 'application/json' } });
      return new Response(body, { headers: { 'content-type': 'application/json; charset=utf-8' } });
    },
  });
  process.stdout.write(`${server.url.origin}\n`);
}

// ---------------------------------------------------------------------------------------------
// Latency client (child process)
// ---------------------------------------------------------------------------------------------

async function runClient(url: string): Promise<void> {
  let stop = false;
  void (async () => {
    for await (const chunk of Bun.stdin.stream()) if (new TextDecoder().decode(chunk).includes('stop')) break;
    stop = true;
  })();
  const samples: [number, number][] = [];
  const loop = async () => {
    while (!stop) {
      const t0 = performance.now();
      const res = await fetch(url);
      await res.arrayBuffer();
      samples.push([performance.timeOrigin + t0, performance.now() - t0]);
    }
  };
  await Promise.all([loop(), loop()]);
  process.stdout.write(JSON.stringify(samples));
}

// ---------------------------------------------------------------------------------------------
// The benchmark
// ---------------------------------------------------------------------------------------------

/** The longest gap between ticks of a 1 ms interval: how long the event loop was held. */
class StallProbe {
  private timer: ReturnType<typeof setInterval> | null = null;
  private last = 0;
  max = 0;
  start(): void {
    this.max = 0;
    this.last = performance.now();
    this.timer = setInterval(() => {
      const now = performance.now();
      this.max = Math.max(this.max, now - this.last);
      this.last = now;
    }, 1);
  }
  stop(): number {
    if (this.timer) clearInterval(this.timer);
    this.max = Math.max(this.max, performance.now() - this.last);
    return this.max;
  }
}

function p(sorted: number[], q: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
}

async function startClient(url: string) {
  const proc = Bun.spawn([process.execPath, SELF, 'client', url], { stdin: 'pipe', stdout: 'pipe', stderr: 'inherit' });
  await Bun.sleep(300); // its start-up and first connections are not part of any window
  return {
    async stop(): Promise<[number, number][]> {
      proc.stdin.write('stop\n');
      await proc.stdin.end();
      const out = await new Response(proc.stdout).text();
      await proc.exited;
      return JSON.parse(out) as [number, number][];
    },
  };
}

function latencies(samples: [number, number][], from = -Infinity, to = Infinity): { n: number; p50: number; p99: number; max: number } {
  const xs = samples.filter(([t]) => t >= from && t <= to).map(([, l]) => l).sort((a, b) => a - b);
  return { n: xs.length, p50: p(xs, 0.5), p99: p(xs, 0.99), max: xs.at(-1) ?? Number.NaN };
}

async function main(): Promise<void> {
  const up = Bun.spawn([process.execPath, SELF, 'upstream'], { stdout: 'pipe', stderr: 'inherit' });
  const reader = up.stdout.getReader();
  const origin = new TextDecoder().decode((await reader.read()).value).trim();
  reader.releaseLock();

  // The real app as the tests build it (test/helpers/app.ts: read model, routes, health), on a
  // temp database, with its clock following real time.
  const t = await liveTestApp();
  const path = t.db.path;
  const writer = openDatabase(path);
  const noCheckpoint = process.argv.includes('--no-autocheckpoint');
  const chunkArg = process.argv.find((a) => a.startsWith('--chunk='));
  const chunkSize = chunkArg ? Number(chunkArg.slice('--chunk='.length)) : undefined;
  if (noCheckpoint) writer.sqlite.exec('PRAGMA wal_autocheckpoint=0');
  const { readModel, app } = t;
  const source = new WazeSource({ baseUrl: `${origin}/georss`, now: Date.now, sleep: (ms) => Bun.sleep(ms), random: Math.random, timeoutMs: 10_000 });
  app.listen({ port: 0, hostname: '127.0.0.1' });
  const eventsUrl = `http://127.0.0.1:${app.server!.port}/api/v1/events`;
  const probe = new StallProbe();
  const inWorker = process.argv.includes('--worker');
  let worker: Worker | null = null;
  let scanOnce = () => runScan({ writer: writer.sqlite, sources: [source], cells: GRID_CELLS, clock: Date.now, logger: silentLogger, ...(chunkSize ? { chunkSize } : {}) });
  if (inWorker) {
    const w = new Worker(new URL(import.meta.url), { workerData: { path, origin, chunkSize } });
    worker = w;
    scanOnce = () =>
      new Promise<ScanSummary>((resolve, reject) => {
        w.once('message', (m: ScanSummary) => resolve(m));
        w.once('error', reject);
        w.postMessage('scan');
      });
  }

  interface ScanMeasure {
    summary: ScanSummary;
    wallMs: number;
    cpuMs: number;
    stallMs: number;
    refreshMs: number;
    refreshStallMs: number;
    from: number;
    scanEnd: number;
    to: number;
  }
  const measuredScan = async (): Promise<ScanMeasure> => {
    probe.start();
    const from = Date.now();
    const cpu0 = process.cpuUsage();
    const t0 = performance.now();
    const summary = await scanOnce();
    const wallMs = performance.now() - t0;
    const cpu = process.cpuUsage(cpu0);
    const stallMs = probe.stop();
    const scanEnd = Date.now();
    // The read model rebuild that follows every scan in `serve`, measured on its own.
    probe.start();
    await Bun.sleep(5);
    const r0 = performance.now();
    readModel.refresh();
    const refreshMs = performance.now() - r0;
    await Bun.sleep(5);
    const refreshStallMs = probe.stop();
    return { summary, wallMs, cpuMs: (cpu.user + cpu.system) / 1000, stallMs, refreshMs, refreshStallMs, from, scanEnd, to: Date.now() };
  };

  process.stderr.write('scan 1 (cold: every item new)…\n');
  const cold = await measuredScan();
  // A server scans every 90 s: later scans run JIT-compiled code. Three unmeasured scans first,
  // so "steady" is steady (the first runs of the parsers held the loop 10–25 ms at a time).
  for (let i = 0; i < WARMUP_SCANS; i++) {
    await fetch(`${origin}/rotate`);
    await scanOnce();
    readModel.refresh();
  }
  await fetch(`${origin}/rotate`);
  process.stderr.write('scan (steady: 5 % new, 5 % gone, some jams changed)…\n');
  const warm = await measuredScan();

  process.stderr.write('idle HTTP latency…\n');
  let client = await startClient(eventsUrl);
  await Bun.sleep(3000);
  const idle = latencies(await client.stop());

  await fetch(`${origin}/rotate`);
  process.stderr.write('scan (steady) under HTTP load…\n');
  client = await startClient(eventsUrl);
  const loaded = await measuredScan();
  await Bun.sleep(200);
  const samples = await client.stop();
  const duringScan = latencies(samples, loaded.from, loaded.scanEnd);
  const duringRefresh = latencies(samples, loaded.scanEnd, loaded.to + 50);

  // RSS with 50,000 events in the 24-hour window (the scans' rows plus seeded ones).
  process.stderr.write('RSS with 50,000 events…\n');
  const have = writer.sqlite.query<{ n: number }, []>("SELECT count(*) AS n FROM events WHERE status = 'active'").get()!.n;
  const now = Date.now();
  const ins = writer.sqlite.prepare(
    `INSERT INTO events (id, source_name, source_id, type, subtype, severity, status, plate, district, lat, lon, geometry, road, description, jam, confidence, reported_at, first_seen_at, last_seen_at, updated_at, cleared_at, cells, missed_scans)
     VALUES (?, 'waze', ?, ?, NULL, 'minor', 'active', 6, 'Çankaya', ?, ?, ?, 'Eskişehir Yolu', 'Benchmark olayı', ?, 0.8, ?, ?, ?, ?, NULL, 'waze:c100', 0)`,
  );
  writer.sqlite.transaction(() => {
    for (let i = 0; i < WINDOW_EVENTS - have; i++) {
      const jam = i % 3 === 0;
      const line = jam ? JSON.stringify({ type: 'LineString', coordinates: linePoints(39.9, 32.8 + i * 1e-6, 90, 4) }) : null;
      ins.run(`evt_seed${i}`, `seed-${i}`, jam ? 'jam' : 'accident', 39.9, 32.8 + i * 1e-6, line, jam ? '{"speed_kmh":12,"length_m":720,"delay_s":240,"level":3}' : null, now - i * 1000, now - 3600_000, now - 60_000, now - 3600_000);
    }
  })();
  probe.start();
  const r50 = performance.now();
  readModel.refresh();
  const refresh50kMs = performance.now() - r50;
  const refresh50kStallMs = probe.stop();
  for (const q of ['', '?limit=1000', '?city=ankara', '?type=jam&format=geojson']) await (await fetch(`${eventsUrl}${q}`)).arrayBuffer();
  Bun.gc(true);
  await Bun.sleep(50);
  Bun.gc(true);
  const rssMb = process.memoryUsage().rss / 1024 / 1024;
  const windowEvents = readModel.activeCount;

  await app.stop(true);
  up.kill();
  await worker?.terminate();
  writer.sqlite.close();
  // The same events in a fresh server process: no benchmark or scan history in its heap.
  const fresh = Bun.spawnSync([process.execPath, SELF, 'rss', path], { stderr: 'inherit' });
  const freshRss = JSON.parse(fresh.stdout.toString()) as { rssMb: number; heapMb: number; extraMb: number; refreshMs: number; events: number };
  t.cleanup();

  // -------------------------------------------------------------------------------------------
  const f = (n: number, d = 1) => (Number.isFinite(n) ? n.toFixed(d) : '—');
  const rows: [string, string, string, string][] = [];
  const row = (what: string, value: string, target = '', ok: boolean | null = null) => rows.push([what, value, target, ok === null ? '' : ok ? 'ok' : 'MISSED']);
  for (const [name, m] of [
    ['scan 1, cold', cold],
    [`scan ${2 + WARMUP_SCANS}, steady`, warm],
    [`scan ${3 + WARMUP_SCANS}, steady + HTTP load`, loaded],
  ] as const) {
    const s = m.summary;
    row(`${name}: items / created / updated / cleared`, `${s.items} / ${s.created} / ${s.updated} / ${s.cleared}`, '', null);
    row(`${name}: wall time`, `${f(m.wallMs, 0)} ms`);
    row(`${name}: CPU time (this process)`, `${f(m.cpuMs, 0)} ms`, '< 1000 ms', name.includes('load') ? null : m.cpuMs < 1000);
    row(`${name}: items/s (per CPU s | per wall s)`, `${f(s.items / (m.cpuMs / 1000), 0)} | ${f(s.items / (m.wallMs / 1000), 0)}`);
    row(`${name}: longest stall during runScan`, `${f(m.stallMs)} ms`, '≤ 25 ms', m.stallMs <= 25);
    row(`${name}: readModel.refresh() after it (sync)`, `${f(m.refreshMs)} ms (stall ${f(m.refreshStallMs)} ms)`, '(reported apart)', null);
  }
  row('HTTP GET /api/v1/events idle: p50 / p99 / max', `${f(idle.p50, 2)} / ${f(idle.p99, 2)} / ${f(idle.max, 2)} ms (n=${idle.n})`);
  row(`… during runScan (scan ${3 + WARMUP_SCANS}): p50 / p99 / max`, `${f(duringScan.p50, 2)} / ${f(duringScan.p99, 2)} / ${f(duringScan.max, 2)} ms (n=${duringScan.n})`, `p99 ≤ ${f(2 * idle.p99, 2)} ms (2× idle)`, duringScan.p99 <= 2 * idle.p99);
  row('… during the refresh after it: p50 / p99 / max', `${f(duringRefresh.p50, 2)} / ${f(duringRefresh.p99, 2)} / ${f(duringRefresh.max, 2)} ms (n=${duringRefresh.n})`);
  row(`readModel.refresh() with ${windowEvents} events (sync)`, `${f(refresh50kMs)} ms (stall ${f(refresh50kStallMs)} ms)`, '(reported apart)');
  row(`RSS, this process after the scans, ${windowEvents} events (after GC)`, `${f(rssMb)} MB`, '≤ 150 MB', rssMb <= 150);
  row(`RSS, fresh server process, ${freshRss.events} events (after GC)`, `${f(freshRss.rssMb)} MB (JS heap ${f(freshRss.heapMb)} MB + strings/buffers ${f(freshRss.extraMb)} MB)`, '≤ 150 MB', freshRss.rssMb <= 150);

  const w = [0, 1, 2, 3].map((i) => Math.max(...rows.map((r) => r[i]!.length), ['metric', 'value', 'target', ''][i]!.length));
  const line = (r: readonly string[]) => `| ${r.map((c, i) => c.padEnd(w[i]!)).join(' | ')} |`;
  const out = [
    `trafik scanner benchmark — ${GRID_CELLS.length} cells, ${ITEMS} items per scan (Waze schema, local fake upstream in its own process), Bun ${Bun.version}, ${navigator.hardwareConcurrency} CPUs${noCheckpoint ? ', --no-autocheckpoint' : ''}${chunkSize ? `, --chunk=${chunkSize}` : ''}${inWorker ? ', --worker' : ''}`,
    line(['metric', 'value', 'target', '']),
    line(w.map((n) => '-'.repeat(n))),
    ...rows.map(line),
  ];
  process.stdout.write(`${out.join('\n')}\n`);
}

/** The app of test/helpers/app.ts with a clock that follows real time. */
async function liveTestApp(): Promise<TestApp> {
  const t = await testApp({ now: Date.now() });
  Object.defineProperty(t.clock, 'now', { get: () => Date.now(), set: () => {} });
  return t;
}

/** A server process as `serve` has it (read model built, app listening), holding `from`'s events. */
async function runRss(from: string): Promise<void> {
  const t = await liveTestApp();
  t.db.sqlite.exec(`ATTACH DATABASE '${from.replaceAll("'", "''")}' AS src; INSERT INTO events SELECT * FROM src.events; INSERT INTO scan_runs SELECT * FROM src.scan_runs; DETACH DATABASE src`);
  const { readModel, app } = t;
  app.listen({ port: 0, hostname: '127.0.0.1' });
  const t0 = performance.now();
  readModel.refresh();
  const refreshMs = performance.now() - t0;
  for (const q of ['', '?limit=1000', '?city=ankara', '?type=jam&format=geojson']) await (await fetch(`http://127.0.0.1:${app.server!.port}/api/v1/events${q}`)).arrayBuffer();
  Bun.gc(true);
  await Bun.sleep(50);
  Bun.gc(true);
  const { heapStats } = await import('bun:jsc');
  const h = heapStats();
  process.stdout.write(JSON.stringify({ rssMb: process.memoryUsage().rss / 1048576, heapMb: h.heapSize / 1048576, extraMb: h.extraMemorySize / 1048576, refreshMs, events: readModel.activeCount }));
  await app.stop(true);
  t.cleanup();
}

/** `--worker`: the scanner on its own thread and connection; one scan per message. */
function runScanWorker(data: { path: string; origin: string; chunkSize: number | undefined }): void {
  const writer = openDatabase(data.path);
  const source = new WazeSource({ baseUrl: `${data.origin}/georss`, now: Date.now, sleep: (ms) => Bun.sleep(ms), random: Math.random, timeoutMs: 10_000 });
  parentPort!.on('message', async () => {
    const summary = await runScan({ writer: writer.sqlite, sources: [source], cells: GRID_CELLS, clock: Date.now, logger: silentLogger, ...(data.chunkSize ? { chunkSize: data.chunkSize } : {}) });
    parentPort!.postMessage(summary);
  });
}

const mode = process.argv[2];
if (parentPort !== null) runScanWorker(workerData as { path: string; origin: string; chunkSize: number | undefined });
else if (mode === 'upstream') runUpstream();
else if (mode === 'client') await runClient(process.argv[3]!);
else if (mode === 'rss') await runRss(process.argv[3]!);
else await main();

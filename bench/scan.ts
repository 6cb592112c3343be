#!/usr/bin/env bun
/**
 * Scanner benchmark: what one scan costs a running `trafik serve`, measured the way serve runs
 * it (src/commands/serve.ts, assembled by bench/lib/serve-like.ts): the real app listening with
 * the limits gate, the main connection with `wal_autocheckpoint = 0`, the scan in a
 * ScannerWorker thread on its own connection to the same file, then
 * `readModel.refreshAsync(yieldToLoop)` and `feed.poll()` on the main thread. Processes:
 *   - a fake Waze upstream (Bun.serve on 127.0.0.1) answering the 220 grid cells with 20,000
 *     items in total, pre-serialized so it costs little (its CPU is not counted anywhere);
 *   - this process: the server (main thread + scanner worker thread) and the probes;
 *   - an HTTP client asking GET /api/v1/events at a fixed rate (open loop), reporting latencies;
 *   - `rss`: a fresh server-shaped process on the resulting database.
 *
 * Sequence: a cold scan (every item new), 3 unmeasured scans (JIT), a steady scan without HTTP
 * load (the clean CPU number), then under the client's load, per scan: 3 s idle, the scan. Then
 * another source's events fill the window to 50,000 active ('tomtom' rows a Waze scan never
 * clears, though runScan still reads them back), the full re-serialization this causes is
 * measured, and the steady scan is repeated without and with load. Last, the RSS process.
 *
 * Probes. Stalls: a 1 ms interval on the main thread; each tick also reads the thread's
 * schedstat (~1 µs) and heap size, so a long gap is split into on-CPU time, time runnable
 * without a CPU (other threads and processes had both cores), and the rest (blocked: I/O,
 * locks); a heap that shrank across it had a collection in it. Gaps are placed against the
 * phases: the worker's scan, each synchronous refresh step (timed by wrapping the pause given
 * to refreshAsync, with the SQL inside it timed by wrapping the window source), feed.poll(),
 * and 50 ms after (first requests on the new snapshot). For GC pauses in detail, run with
 * BUN_JSC_logGC=1 (stderr). CPU: process.cpuUsage() is getrusage(RUSAGE_SELF), so every
 * thread of this process — the main thread (refresh, poll, HTTP handlers, the probe itself),
 * the scanner worker, Bun's HTTP-client, JIT and GC helper threads; the split per thread comes
 * from /proc/self/task/<tid>/schedstat (the worker's thread is named "Worker"). The scans
 * without HTTP load give the clean numbers. `bun --cpu-prof` profiles the main thread only.
 *
 *   bun bench/scan.ts                  run it and print the table
 *     --main-thread                    the server as before the worker (64c9c15^): scanAndPurge on
 *                                      the main thread on a second connection, autocheckpointing
 *     --rps=N                          client rate, requests/s (default 200); --rps=0: closed
 *                                      loop, two requests in flight, as fast as they come back
 *     --loaded=N                       scans under HTTP load with the 20k window (default 2)
 *     --idle=MS                        idle latency window before each loaded scan (default 3000)
 *     --json=PATH                      also write the measurements as JSON
 *     --keep                           keep the database (its path goes to stderr)
 *     --nice-worker=N                  renice the scanner worker's thread (a proposal to try,
 *                                      not what serve does)
 *   bun bench/scan.ts upstream         (internal) the fake upstream
 *   bun bench/scan.ts client URL RPS   (internal) the latency client; stops on "stop" on stdin
 *   bun bench/scan.ts rss DB ORIGIN    (internal) a fresh server process on DB: RSS before and
 *                                      after its scanner worker starts, after one and two scans
 */
import { openSync, readdirSync, readFileSync, readSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { heapStats } from 'bun:jsc';
import { openDatabase } from '../src/db/client.ts';
import type { EventRow } from '../src/db/schema/index.ts';
import { provinceAt } from '../src/provinces/index.ts';
import type { EventHead, WindowSource } from '../src/read-model/load-window.ts';
import { GRID_CELLS } from '../src/scanner/grid/index.ts';
import { yieldToLoop } from '../src/scanner/pool.ts';
import type { ScanSummary } from '../src/scanner/scan.ts';
import { linePoints, seededRandom, wazeAlert, wazeJam, wazeResponse } from '../scripts/upstream-payloads.ts';
import { startServeLike, type ServeLike } from './lib/serve-like.ts';

const ITEMS = 20_000;
const WINDOW_EVENTS = 50_000;
const WARMUP_SCANS = 3;
const SELF = import.meta.path;
/** Gaps between probe ticks at least this long are kept for attribution. */
const GAP_KEEP_MS = 5;
/** The probe keeps running this long after feed.poll(). */
const TAIL_MS = 50;
const TARGET = { cpuMs: 1000, stallMs: 25, p99Factor: 2, rssMb: 150 };

const now = () => performance.timeOrigin + performance.now();
const arg = (name: string): string | undefined => process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
const mb = (bytes: number) => bytes / 1048576;

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

/** [start (epoch ms), latency (ms), HTTP status] */
type Sample = [number, number, number];

async function runClient(url: string, rps: number): Promise<void> {
  let stop = false;
  void (async () => {
    for await (const chunk of Bun.stdin.stream()) if (new TextDecoder().decode(chunk).includes('stop')) break;
    stop = true;
  })();
  const samples: Sample[] = [];
  const one = async () => {
    const t0 = performance.now();
    let status = 0;
    try {
      const res = await fetch(url);
      await res.arrayBuffer();
      status = res.status;
    } catch {}
    samples.push([performance.timeOrigin + t0, performance.now() - t0, status]);
  };
  if (rps > 0) {
    // Open loop: a request every 1/rps s whatever the server does, so a stall shows up as the
    // latency of every request that arrives during it (a closed loop would just send fewer).
    const interval = 1000 / rps;
    const inflight = new Set<Promise<void>>();
    let next = performance.now();
    while (!stop) {
      next += interval;
      const wait = next - performance.now();
      if (wait > 0) await Bun.sleep(wait);
      else if (wait < -1000) next = performance.now(); // this process was starved: don't burst
      const p = one().then(() => void inflight.delete(p));
      inflight.add(p);
    }
    await Promise.all(inflight);
  } else {
    const loop = async () => {
      while (!stop) await one();
    };
    await Promise.all([loop(), loop()]);
  }
  process.stdout.write(JSON.stringify(samples));
}

// ---------------------------------------------------------------------------------------------
// Probes
// ---------------------------------------------------------------------------------------------

/** A thread's on-CPU and runnable-but-waiting time (ns), from /proc/<tid>/schedstat. */
function schedstat(text: string): [number, number] {
  const [cpu, wait] = text.split(' ');
  return [Number(cpu), Number(wait)];
}

interface ThreadTime {
  comm: string;
  cpuNs: number;
  waitNs: number;
}

function threadTimes(): Map<number, ThreadTime> {
  const out = new Map<number, ThreadTime>();
  let tids: string[] = [];
  try {
    tids = readdirSync('/proc/self/task');
  } catch {
    return out;
  }
  for (const t of tids) {
    try {
      const [cpuNs, waitNs] = schedstat(readFileSync(`/proc/self/task/${t}/schedstat`, 'latin1'));
      out.set(Number(t), { comm: readFileSync(`/proc/self/task/${t}/comm`, 'latin1').trim(), cpuNs, waitNs });
    } catch {} // the thread ended
  }
  return out;
}

interface ThreadSplit {
  mainMs: number;
  /** Time the main thread was runnable but had no CPU (other threads/processes had them). */
  mainRunqMs: number;
  workerMs: number;
  workerRunqMs: number;
  otherMs: number;
  /** Other threads by name (JIT, GC helpers, HTTP client, …), ms. */
  others: Record<string, number>;
}

function threadSplit(a: Map<number, ThreadTime>, b: Map<number, ThreadTime>): ThreadSplit {
  const s: ThreadSplit = { mainMs: 0, mainRunqMs: 0, workerMs: 0, workerRunqMs: 0, otherMs: 0, others: {} };
  for (const [tid, t1] of b) {
    const t0 = a.get(tid) ?? { comm: t1.comm, cpuNs: 0, waitNs: 0 };
    const cpu = (t1.cpuNs - t0.cpuNs) / 1e6;
    const wait = (t1.waitNs - t0.waitNs) / 1e6;
    if (tid === process.pid) {
      s.mainMs += cpu;
      s.mainRunqMs += wait;
    } else if (t1.comm === 'Worker') {
      s.workerMs += cpu;
      s.workerRunqMs += wait;
    } else {
      s.otherMs += cpu;
      const name = t1.comm.replace(/\s*\d+$/, '');
      s.others[name] = (s.others[name] ?? 0) + cpu;
    }
  }
  return s;
}

interface Gap {
  /** Epoch ms the gap started and ended. */
  start: number;
  end: number;
  ms: number;
  /** Main thread's time on a CPU / runnable without one, during the gap. */
  cpuMs: number;
  runqMs: number;
  /** Main-thread JS heap shrank by this much across the gap (a collection ran in it). */
  heapDropMb: number;
}

/**
 * A 1 ms interval on the main thread: the longest gap between ticks is how long the event loop
 * was held. Each tick also reads the thread's schedstat (~1 µs) and heap size, so a long gap can
 * be told apart: the thread was running (JS, SQLite, GC) or waiting for a CPU.
 */
class StallProbe {
  private timer: ReturnType<typeof setInterval> | null = null;
  private fd = -1;
  private readonly buf = Buffer.alloc(128);
  private last = 0;
  private lastSched: [number, number] = [0, 0];
  private lastHeap = 0;
  max = 0;
  gaps: Gap[] = [];

  private sched(): [number, number] {
    if (this.fd < 0) return [0, 0];
    const n = readSync(this.fd, this.buf, 0, this.buf.length, 0);
    return schedstat(this.buf.toString('latin1', 0, n));
  }

  start(): void {
    try {
      if (this.fd < 0) this.fd = openSync(`/proc/self/task/${process.pid}/schedstat`, 'r');
    } catch {}
    this.max = 0;
    this.gaps = [];
    this.last = now();
    this.lastSched = this.sched();
    this.lastHeap = process.memoryUsage().heapUsed;
    this.timer = setInterval(() => this.tick(), 1);
  }

  private tick(): void {
    const t = now();
    const gap = t - this.last;
    const s = this.sched();
    const heap = process.memoryUsage().heapUsed;
    this.max = Math.max(this.max, gap);
    if (gap >= GAP_KEEP_MS) {
      this.gaps.push({ start: this.last, end: t, ms: gap, cpuMs: (s[0] - this.lastSched[0]) / 1e6, runqMs: (s[1] - this.lastSched[1]) / 1e6, heapDropMb: Math.max(0, mb(this.lastHeap - heap)) });
    }
    this.last = t;
    this.lastSched = s;
    this.lastHeap = heap;
  }

  stop(): number {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    this.tick();
    return this.max;
  }
}

/** Times the read model's SQLite reads, so a refresh step can be split into SQL and the rest. */
const sql = { headsMs: 0, rowsMs: 0, rows: 0 };
function timedSource(s: WindowSource): WindowSource {
  return {
    *heads(since: number, chunk: number): Generator<EventHead[]> {
      const it = s.heads(since, chunk)[Symbol.iterator]();
      for (;;) {
        const t0 = performance.now();
        const r = it.next();
        sql.headsMs += performance.now() - t0;
        if (r.done) return;
        yield r.value;
      }
    },
    rows(ids: readonly string[]): EventRow[] {
      const t0 = performance.now();
      const r = s.rows(ids);
      sql.rowsMs += performance.now() - t0;
      sql.rows += r.length;
      return r;
    },
    dataUpdatedAt: () => s.dataUpdatedAt(),
  };
}

function p(sorted: number[], q: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
}

interface Latency {
  n: number;
  p50: number;
  p99: number;
  max: number;
  failed: number;
}

function latencies(samples: Sample[], windows: [number, number][]): Latency {
  const inside = samples.filter(([t]) => windows.some(([a, b]) => t >= a && t <= b));
  const xs = inside.map(([, l]) => l).sort((a, b) => a - b);
  return { n: xs.length, p50: p(xs, 0.5), p99: p(xs, 0.99), max: xs.at(-1) ?? Number.NaN, failed: inside.filter(([, , s]) => s !== 200).length };
}

async function startClient(url: string, rps: number) {
  const proc = Bun.spawn([process.execPath, SELF, 'client', url, String(rps)], { stdin: 'pipe', stdout: 'pipe', stderr: 'inherit' });
  await Bun.sleep(500); // its start-up and first connections are not part of any window
  return {
    async stop(): Promise<Sample[]> {
      proc.stdin.write('stop\n');
      await proc.stdin.end();
      const out = await new Response(proc.stdout).text();
      await proc.exited;
      return JSON.parse(out) as Sample[];
    },
  };
}

async function gcSettled(): Promise<void> {
  Bun.gc(true);
  await Bun.sleep(100);
  Bun.gc(true);
  await Bun.sleep(400);
}

/**
 * RSS and this thread's JSC heap. JSC's heapSize counts extraMemorySize too (ArrayBuffers such as
 * the read model's arena, response bodies): `cellsMb` is the rest, the JS objects and strings.
 * A worker's heap is its own VM's: not in these numbers, and Bun.gc() here does not collect it.
 */
function memory() {
  const h = heapStats();
  return { rssMb: mb(process.memoryUsage().rss), cellsMb: mb(h.heapSize - h.extraMemorySize), extraMb: mb(h.extraMemorySize) };
}

/** Lowers the scanner worker thread's scheduling priority (a proposal being tried, not serve). */
function niceWorker(n: number): number[] {
  const tids = [...threadTimes()].filter(([, t]) => t.comm === 'Worker').map(([tid]) => tid);
  for (const tid of tids) Bun.spawnSync(['renice', '-n', String(n), '-p', String(tid)], { stdout: 'ignore', stderr: 'inherit' });
  return tids;
}

// ---------------------------------------------------------------------------------------------
// One scan as serve runs it, measured
// ---------------------------------------------------------------------------------------------

interface Step {
  start: number;
  end: number;
  sqlMs: number;
}

interface ScanMeasure {
  label: string;
  summary: ScanSummary | null;
  /** Window: active events / cleared ones still in the 24 h window, after the refresh. */
  active: number;
  cleared24h: number;
  from: number;
  scanDone: number;
  refreshDone: number;
  to: number;
  scanMs: number;
  refreshMs: number;
  pollMs: number;
  wallMs: number;
  cpuMs: number;
  threads: ThreadSplit;
  stallMs: number;
  /** The longest gaps, with where they fell. */
  worst: string[];
  gaps: Gap[];
  steps: number;
  stepSyncMs: number;
  maxStepMs: number;
  maxStepSqlMs: number;
  sqlHeadsMs: number;
  sqlRowsMs: number;
  rowsSerialized: number;
}

function attribute(g: Gap, m: { from: number; scanDone: number; refreshDone: number; to: number; steps: Step[] }, mainThread: boolean): string {
  const overlap = (a: number, b: number) => Math.max(0, Math.min(g.end, b) - Math.max(g.start, a));
  let where: string;
  let best = 0;
  let bestStep = -1;
  m.steps.forEach((s, i) => {
    const o = overlap(s.start, s.end);
    if (o > best) {
      best = o;
      bestStep = i;
    }
  });
  if (bestStep >= 0 && best >= g.ms / 2) {
    const s = m.steps[bestStep]!;
    where = `refresh step ${bestStep + 1}/${m.steps.length} (${(s.end - s.start).toFixed(1)} ms sync, SQL ${s.sqlMs.toFixed(1)} ms)`;
  } else {
    const phases: [string, number][] = [
      ['before the scan', overlap(-Infinity, m.from)],
      [mainThread ? 'in-process scan (runScan/purge on this thread)' : 'worker scan running: main thread only serving HTTP/timers', overlap(m.from, m.scanDone)],
      ['refresh, between steps (HTTP handlers, timers)', overlap(m.scanDone, m.refreshDone)],
      ['feed.poll()', overlap(m.refreshDone, m.to)],
      ['just after: first requests on the new snapshot, GC', overlap(m.to, Infinity)],
    ];
    where = phases.reduce((a, b) => (b[1] > a[1] ? b : a))[0];
  }
  const blocked = g.ms - g.cpuMs - g.runqMs;
  const cause = [`main on CPU ${g.cpuMs.toFixed(1)} ms`, `waiting for a CPU ${g.runqMs.toFixed(1)} ms`];
  if (blocked >= 2) cause.push(`blocked (I/O, locks) ${blocked.toFixed(1)} ms`);
  if (g.heapDropMb >= 0.5) cause.push(`heap −${g.heapDropMb.toFixed(1)} MB (GC in it)`);
  return `${g.ms.toFixed(1)} ms at +${(g.start - m.from).toFixed(0)} ms: ${where}; ${cause.join(', ')}`;
}

async function measuredScan(srv: ServeLike, probe: StallProbe, label: string, mainThread: boolean, scan = true): Promise<ScanMeasure> {
  process.stderr.write(`${label}…\n`);
  const th0 = threadTimes();
  const sql0 = { ...sql };
  probe.start();
  await Bun.sleep(3);
  const cpu0 = process.cpuUsage();
  const from = now();
  const summary = scan ? await srv.scan() : null;
  const scanDone = now();
  // serve: `await readModel.refreshAsync(yieldToLoop)`. The pause is wrapped only to timestamp
  // the synchronous steps between its turns.
  const steps: Step[] = [];
  let stepStart = now();
  let stepSql = sql.headsMs + sql.rowsMs;
  const pause = () => {
    const t = now();
    steps.push({ start: stepStart, end: t, sqlMs: sql.headsMs + sql.rowsMs - stepSql });
    return yieldToLoop().then(() => {
      stepStart = now();
      stepSql = sql.headsMs + sql.rowsMs;
    });
  };
  await srv.readModel.refreshAsync(pause);
  const refreshDone = now();
  steps.push({ start: stepStart, end: refreshDone, sqlMs: sql.headsMs + sql.rowsMs - stepSql });
  srv.feed.poll();
  const to = now();
  const cpu = process.cpuUsage(cpu0);
  const threads = threadSplit(th0, threadTimes());
  // The swap's aftermath belongs to the scan: the first requests rebuild their pages on the new
  // snapshot, and the old one becomes garbage.
  await Bun.sleep(TAIL_MS);
  probe.stop();
  const m = { from, scanDone, refreshDone, to, steps };
  const gaps = probe.gaps.filter((g) => g.end > from && g.start < to + TAIL_MS).sort((a, b) => b.ms - a.ms);
  const stallMs = gaps[0]?.ms ?? Math.min(probe.max, GAP_KEEP_MS);
  const worst = gaps.slice(0, 4).map((g) => attribute(g, m, mainThread));
  const longest = steps.reduce((a, s) => (s.end - s.start > a.end - a.start ? s : a), steps[0]!);
  return {
    label,
    summary,
    active: srv.readModel.activeCount,
    cleared24h: srv.readModel.last24h.cleared,
    from,
    scanDone,
    refreshDone,
    to,
    scanMs: scanDone - from,
    refreshMs: refreshDone - scanDone,
    pollMs: to - refreshDone,
    wallMs: to - from,
    cpuMs: (cpu.user + cpu.system) / 1000,
    threads,
    stallMs,
    worst,
    gaps: gaps.slice(0, 4),
    steps: steps.length,
    stepSyncMs: steps.reduce((a, s) => a + s.end - s.start, 0),
    maxStepMs: longest.end - longest.start,
    maxStepSqlMs: longest.sqlMs,
    sqlHeadsMs: sql.headsMs - sql0.headsMs,
    sqlRowsMs: sql.rowsMs - sql0.rowsMs,
    rowsSerialized: sql.rows - sql0.rows,
  };
}

/** Active events up to `total`, as another source's (never cleared by a Waze scan). */
function seedWindow(path: string, total: number): number {
  const db = openDatabase(path);
  const have = db.sqlite.query<{ n: number }, []>("SELECT count(*) AS n FROM events WHERE status = 'active'").get()!.n;
  const t = Date.now();
  const ins = db.sqlite.prepare(
    `INSERT INTO events (id, source_name, source_id, type, subtype, severity, status, plate, district, lat, lon, geometry, road, description, jam, confidence, reported_at, first_seen_at, last_seen_at, updated_at, cleared_at, cells, missed_scans)
     VALUES (?, 'tomtom', ?, ?, NULL, 'minor', 'active', 6, 'Çankaya', ?, ?, ?, 'Eskişehir Yolu', 'Benchmark olayı', ?, 0.8, ?, ?, ?, ?, NULL, 'tomtom:c100', 0)`,
  );
  const n = Math.max(0, total - have);
  db.sqlite.transaction(() => {
    for (let i = 0; i < n; i++) {
      const jam = i % 3 === 0;
      const line = jam ? JSON.stringify({ type: 'LineString', coordinates: linePoints(39.9, 32.8 + i * 1e-6, 90, 4) }) : null;
      ins.run(`evt_seed${i}`, `seed-${i}`, jam ? 'jam' : 'accident', 39.9, 32.8 + i * 1e-6, line, jam ? '{"speed_kmh":12,"length_m":720,"delay_s":240,"level":3}' : null, t - i * 1000, t - 3600_000, t - 60_000, t - 3600_000);
    }
  })();
  db.sqlite.close();
  return n;
}

// ---------------------------------------------------------------------------------------------
// The benchmark
// ---------------------------------------------------------------------------------------------

interface RssReport {
  events: number;
  cleared24h: number;
  noWorker: ReturnType<typeof memory>;
  idle: ReturnType<typeof memory>;
  /** After each scan (+ refresh, poll, the same requests) and a GC of this thread. */
  afterScans: { items: number; mem: ReturnType<typeof memory> }[];
  later: ReturnType<typeof memory>;
}

async function main(): Promise<void> {
  const mainThread = process.argv.includes('--main-thread');
  const rps = Number(arg('rps') ?? 200);
  const loadedScans = Number(arg('loaded') ?? 2);
  const idleMs = Number(arg('idle') ?? 3000);
  const jsonPath = arg('json');
  const nice = arg('nice-worker');
  const loadBefore = loadavg();

  const up = Bun.spawn([process.execPath, SELF, 'upstream'], { stdout: 'pipe', stderr: 'inherit' });
  const reader = up.stdout.getReader();
  const origin = new TextDecoder().decode((await reader.read()).value).trim();
  reader.releaseLock();
  const rotate = async () => void (await (await fetch(`${origin}/rotate`)).text());

  const dir = mkdtempSync(join(tmpdir(), 'trafik-bench-scan-'));
  const path = join(dir, 'trafik.db');
  const srv = await startServeLike({ databasePath: path, wazeUrl: `${origin}/georss`, mainThread, wrapSource: timedSource });
  if (nice !== undefined && !mainThread) niceWorker(Number(nice));
  const eventsUrl = `${srv.origin}/api/v1/events`;
  const probe = new StallProbe();
  const scan = (label: string) => measuredScan(srv, probe, label, mainThread);

  const cold = await scan('scan 1 (cold: every item new), no HTTP load');
  // A server scans every 90 s: later scans run JIT-compiled code (the worker keeps its VM).
  for (let i = 0; i < WARMUP_SCANS; i++) {
    await rotate();
    await srv.scan();
    await srv.readModel.refreshAsync(yieldToLoop);
    srv.feed.poll();
  }
  await rotate();
  const steady = await scan(`scan ${2 + WARMUP_SCANS} (steady: 5 % new, 5 % gone, some jams slower), no HTTP load`);

  /** Idle latency windows, then a scan each, under the client's load. */
  const underLoad = async (n: number, label: (i: number) => string) => {
    const client = await startClient(eventsUrl, rps);
    const idle: [number, number][] = [];
    const scans: ScanMeasure[] = [];
    let idleStall: Gap | null = null;
    for (let i = 0; i < n; i++) {
      await rotate();
      const a = now();
      probe.start();
      await Bun.sleep(idleMs);
      probe.stop();
      for (const g of probe.gaps) if (idleStall === null || g.ms > idleStall.ms) idleStall = g;
      idle.push([a, now()]);
      scans.push(await scan(label(i)));
    }
    await Bun.sleep(300);
    const samples = await client.stop();
    return {
      scans,
      idleStall,
      idle: latencies(samples, idle),
      during: latencies(samples, scans.map((m) => [m.from, m.to + TAIL_MS])),
      duringScan: latencies(samples, scans.map((m) => [m.from, m.scanDone])),
      duringRefresh: latencies(samples, scans.map((m) => [m.scanDone, m.to + TAIL_MS])),
    };
  };
  const loaded = await underLoad(loadedScans, (i) => `scan ${3 + WARMUP_SCANS + i} (steady), HTTP load ${rps > 0 ? `${rps} req/s` : 'closed loop'}`);

  // 50,000 active events in the 24-hour window: the scans' rows plus another source's.
  process.stderr.write(`seeding the window to ${WINDOW_EVENTS} active events…\n`);
  const seeded = seedWindow(path, WINDOW_EVENTS);
  const rebuild = await measuredScan(srv, probe, `refresh after ${seeded} rows appeared (no scan; every one serialized)`, mainThread, false);
  await rotate();
  const steady50 = await scan('scan with the 50k window, no HTTP load');
  const loaded50 = await underLoad(1, () => `scan with the 50k window, HTTP load ${rps > 0 ? `${rps} req/s` : 'closed loop'}`);

  for (const q of ['', '?limit=1000', '?city=ankara', '?type=jam&format=geojson']) await (await fetch(`${eventsUrl}${q}`)).arrayBuffer();
  await gcSettled();
  const here = memory();

  await srv.stop();
  // The same database in a fresh server process: no benchmark or scan history in its heap.
  process.stderr.write('fresh server process: RSS…\n');
  const fresh = Bun.spawnSync([process.execPath, SELF, 'rss', path, origin, ...(mainThread ? ['--main-thread'] : []), ...(nice !== undefined ? [`--nice-worker=${nice}`] : [])], { stderr: 'inherit' });
  const rss = JSON.parse(fresh.stdout.toString()) as RssReport;
  up.kill();
  if (process.argv.includes('--keep')) process.stderr.write(`kept ${path}\n`);
  else rmSync(dir, { recursive: true, force: true });
  const loadAfter = loadavg();

  // -------------------------------------------------------------------------------------------
  const f = (n: number, d = 1) => (Number.isFinite(n) ? n.toFixed(d) : '—');
  const rows: [string, string, string, string][] = [];
  const row = (what: string, value: string, target = '', ok: boolean | null = null) => rows.push([what, value, target, ok === null ? '' : ok ? 'ok' : 'MISSED']);
  const scanRows = (m: ScanMeasure, cpuTarget: boolean) => {
    const s = m.summary;
    row(`${m.label}`, '', '', null);
    if (s) row('  items / created / updated / cleared', `${s.items} / ${s.created} / ${s.updated} / ${s.cleared}`);
    row('  window after it: active / cleared in 24 h', `${m.active} / ${m.cleared24h}`);
    row('  wall: scan / refreshAsync / feed.poll / total', `${f(m.scanMs, 0)} / ${f(m.refreshMs, 0)} / ${f(m.pollMs, 0)} / ${f(m.wallMs, 0)} ms`);
    row('  CPU, whole process (all threads)', `${f(m.cpuMs, 0)} ms`, cpuTarget ? `< ${TARGET.cpuMs} ms` : '', cpuTarget ? m.cpuMs < TARGET.cpuMs : null);
    const others = Object.entries(m.threads.others)
      .filter(([, v]) => v >= 1)
      .sort((a, b) => b[1] - a[1])
      .map(([k, v]) => `${k} ${f(v, 0)}`)
      .join(', ');
    row('  CPU by thread: main / worker / other', `${f(m.threads.mainMs, 0)} / ${f(m.threads.workerMs, 0)} / ${f(m.threads.otherMs, 0)} ms${others ? ` (${others})` : ''}`);
    row('  main thread runnable without a CPU', `${f(m.threads.mainRunqMs, 0)} ms (worker: ${f(m.threads.workerRunqMs, 0)} ms)`);
    if (s) row('  items/s: per process-CPU s | per wall s', `${f(s.items / (m.cpuMs / 1000), 0)} | ${f(s.items / (m.wallMs / 1000), 0)}`);
    row('  refresh: steps / sync total / longest step (its SQL)', `${m.steps} / ${f(m.stepSyncMs, 0)} ms / ${f(m.maxStepMs)} ms (${f(m.maxStepSqlMs)} ms)`);
    row('  refresh: SQL heads / SQL rows (rows re-serialized)', `${f(m.sqlHeadsMs, 0)} / ${f(m.sqlRowsMs, 0)} ms (${m.rowsSerialized})`);
    row(`  longest main-thread stall, scan + refresh + poll + ${TAIL_MS} ms`, `${f(m.stallMs)} ms`, `≤ ${TARGET.stallMs} ms`, m.stallMs <= TARGET.stallMs);
    for (const w of m.worst) row(`    gap ${w.slice(0, w.indexOf(' ms at'))} ms`, w.slice(w.indexOf(' ms at') + 4));
  };
  const latRows = (l: Awaited<ReturnType<typeof underLoad>>, name: string) => {
    const fmt = (x: Latency) => `${f(x.p50, 2)} / ${f(x.p99, 2)} / ${f(x.max, 2)} ms (n=${x.n}${x.failed ? `, ${x.failed} not 200` : ''})`;
    row(`HTTP ${name}, idle: p50 / p99 / max`, fmt(l.idle));
    const g = l.idleStall;
    row('  longest main-thread stall in those idle windows', g ? `${f(g.ms)} ms (main on CPU ${f(g.cpuMs)} ms, waiting for a CPU ${f(g.runqMs)} ms${g.heapDropMb >= 0.5 ? `, heap −${f(g.heapDropMb)} MB (GC in it)` : ''})` : `< ${GAP_KEEP_MS} ms`);
    row(`HTTP ${name}, during scan + refresh + poll + ${TAIL_MS} ms`, fmt(l.during), `p99 ≤ ${f(TARGET.p99Factor * l.idle.p99, 2)} ms (${TARGET.p99Factor}× idle)`, l.during.p99 <= TARGET.p99Factor * l.idle.p99);
    row('  … while the scan runs', fmt(l.duringScan));
    row(`  … from the scan's commit: refresh, poll, ${TAIL_MS} ms after`, fmt(l.duringRefresh));
  };
  scanRows(cold, false);
  scanRows(steady, true);
  for (const m of loaded.scans) scanRows(m, false);
  latRows(loaded, `GET /api/v1/events (${steady.active} active)`);
  scanRows(rebuild, false);
  scanRows(steady50, true);
  for (const m of loaded50.scans) scanRows(m, false);
  latRows(loaded50, `GET /api/v1/events (${steady50.active} active)`);
  const rr = (x: RssReport['idle']) => `${f(x.rssMb)} MB (main thread: JS cells ${f(x.cellsMb)} MB, ArrayBuffers etc. ${f(x.extraMb)} MB)`;
  row(`RSS, this process at the end (after GC)`, rr(here));
  row(`RSS, fresh server, ${rss.events} active + ${rss.cleared24h} cleared: before the scanner`, rr(rss.noWorker));
  row(`  … with the scanner ${mainThread ? '(in-process)' : 'worker'} started, idle`, rr(rss.idle), `≤ ${TARGET.rssMb} MB`, rss.idle.rssMb <= TARGET.rssMb);
  rss.afterScans.forEach((a, i) => row(`  … after scan ${i + 1} (${a.items} items) + refresh + poll`, rr(a.mem), `≤ ${TARGET.rssMb} MB`, a.mem.rssMb <= TARGET.rssMb));
  row('  … 3 s later', rr(rss.later), `≤ ${TARGET.rssMb} MB`, rss.later.rssMb <= TARGET.rssMb);

  const w = [0, 1, 2, 3].map((i) => Math.max(...rows.map((r) => r[i]!.length), ['metric', 'value', 'target', ''][i]!.length));
  const line = (r: readonly string[]) => `| ${r.map((c, i) => c.padEnd(w[i]!)).join(' | ')} |`;
  const la = (l: number[]) => l.map((x) => x.toFixed(2)).join(' ');
  const out = [
    `trafik scanner benchmark — ${mainThread ? 'scan on the MAIN THREAD (--main-thread, as before the worker)' : 'scan in the ScannerWorker thread (as serve)'}; ${GRID_CELLS.length} cells, ${ITEMS} items per scan; HTTP client ${rps > 0 ? `${rps} req/s open loop` : 'closed loop, 2 in flight'}; Bun ${Bun.version}, ${navigator.hardwareConcurrency} CPUs; load average ${la(loadBefore)} at start, ${la(loadAfter)} at end`,
    line(['metric', 'value', 'target', '']),
    line(w.map((n) => '-'.repeat(n))),
    ...rows.map(line),
  ];
  process.stdout.write(`${out.join('\n')}\n`);
  if (jsonPath) writeFileSync(jsonPath, JSON.stringify({ mainThread, rps, loadBefore, loadAfter, cold, steady, loaded, rebuild, steady50, loaded50, here, rss }, null, 1));
}

/**
 * A fresh server process shaped like `serve` on `path`: RSS before and after its scanner starts,
 * after one scan and a second (a worker's garbage is only collected when its own VM decides to),
 * and 3 s later. Before each reading this thread's heap is collected; the worker's cannot be.
 */
async function runRss(path: string, origin: string, mainThread: boolean, nice: string | undefined): Promise<void> {
  const srv = await startServeLike({ databasePath: path, wazeUrl: `${origin}/georss`, mainThread, deferScanner: true });
  const warm = async () => {
    for (const q of ['', '?limit=1000', '?city=ankara', '?type=jam&format=geojson']) await (await fetch(`${srv.origin}/api/v1/events${q}`)).arrayBuffer();
  };
  await warm();
  await gcSettled();
  const noWorker = memory();
  await srv.startScanner();
  if (nice !== undefined && !mainThread) niceWorker(Number(nice));
  await Bun.sleep(500);
  await gcSettled();
  const idle = memory();
  const afterScans: RssReport['afterScans'] = [];
  for (let i = 0; i < 2; i++) {
    await (await fetch(`${origin}/rotate`)).text();
    const summary = await srv.scan();
    await srv.readModel.refreshAsync(yieldToLoop);
    srv.feed.poll();
    await warm();
    await gcSettled();
    afterScans.push({ items: summary.items, mem: memory() });
  }
  await Bun.sleep(3000);
  await gcSettled();
  const later = memory();
  const report: RssReport = { events: srv.readModel.activeCount, cleared24h: srv.readModel.last24h.cleared, noWorker, idle, afterScans, later };
  process.stdout.write(JSON.stringify(report));
  await srv.stop();
}

const mode = process.argv[2];
if (mode === 'upstream') runUpstream();
else if (mode === 'client') await runClient(process.argv[3]!, Number(process.argv[4] ?? 200));
else if (mode === 'rss') await runRss(process.argv[3]!, process.argv[4]!, process.argv.includes('--main-thread'), arg('nice-worker'));
else await main();

/**
 * Webhook fan-out and delivery: 10,000 changes fanned out to 20 endpoints subscribed to
 * everything (200,000 deliveries), delivered to 20 healthy local receivers (20 Bun.serve ports in
 * a separate process, pinned to CPU 1; this process is pinned to CPU 0 when taskset exists). This
 * process plays the server: a scanner-like writer commits the changes on its own connection (one
 * transaction per batch, chunks of 500 with an event-loop turn between, as the scanner does) and
 * calls `wake()`; the real worker (`startWebhookWorker`, busy-timeout-0 connection, real timers,
 * default settings) fans out and delivers.
 *
 * Lag = receipt time at the receiver − commit time of the change (Date.now on one machine).
 * Arrival patterns:
 *   scans:      10 commits of 1,000 changes, one every --interval ms (default 2000). The real
 *               scanner commits every 90 s; 2 s apart, each batch (20,000 deliveries) still has
 *               the worker to itself, as in production — the pattern the < 2 s p99 target is for.
 *   sustained:  the same, twice as often (about 20,000 deliveries/s offered: past this box's capacity)
 *   burst:      all 10,000 changes in one commit
 *   bun bench/webhooks.ts [--changes 10000] [--endpoints 20] [--batches 10] [--interval 2000]
 *                         [--concurrency N] [--per-endpoint N]
 */
import { Database } from 'bun:sqlite';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openDatabase } from '../src/db/client.ts';
import { applyMigrations } from '../src/db/migrate.ts';
import type { EventRow } from '../src/db/schema/index.ts';
import { EVENT_TYPES } from '../src/domain/event.ts';
import { toApiEvent } from '../src/read-model/event-json.ts';
import { PROVINCES } from '../src/provinces/index.ts';
import { addEndpoint, startWebhookWorker } from '../src/webhooks/index.ts';
import { pin } from './lib/load.ts';

const arg = (name: string, fallback: number) => {
  const i = process.argv.indexOf(`--${name}`);
  return i === -1 ? fallback : Number(process.argv[i + 1]);
};

// The worker side runs on CPU 0, the receivers on CPU 1 (when taskset exists).
if (!process.argv.includes('--receivers') && process.env.TRAFIK_BENCH_PINNED === undefined && pin(0).length > 0) {
  const child = Bun.spawn([...pin(0), 'bun', import.meta.path, ...process.argv.slice(2)], { env: { ...process.env, TRAFIK_BENCH_PINNED: '1' }, stdout: 'inherit', stderr: 'inherit' });
  process.exit(await child.exited);
}

// ---- receiver mode: `bun bench/webhooks.ts --receivers N` ----------------------------------------
if (process.argv.includes('--receivers')) {
  const n = arg('receivers', 20);
  let receipts: (string | number)[] = [];
  let count = 0;
  const ports: number[] = [];
  for (let i = 0; i < n; i++) {
    const server = Bun.serve({
      hostname: '127.0.0.1',
      port: 0,
      fetch: async (req) => {
        const path = new URL(req.url).pathname;
        if (path === '/__count') return Response.json(count);
        if (path === '/__receipts') {
          const out = receipts;
          receipts = [];
          count = 0;
          return Response.json(out);
        }
        await req.arrayBuffer();
        receipts.push(req.headers.get('webhook-id') ?? '', Date.now());
        count++;
        return new Response(null, { status: 204 });
      },
    });
    ports.push(server.port!);
  }
  process.stdout.write(`${JSON.stringify(ports)}\n`);
  await new Promise(() => {});
}

// ---- the server side ------------------------------------------------------------------------------
const CHANGES = arg('changes', 10_000);
const ENDPOINTS = arg('endpoints', 20);
const BATCHES = arg('batches', 10);
const INTERVAL = arg('interval', 2000);
/** 0 = the worker's defaults. */
const CONCURRENCY = arg('concurrency', 0);
const PER_ENDPOINT = arg('per-endpoint', 0);

const receiversProc = Bun.spawn([...pin(1), 'bun', import.meta.path, '--receivers', String(ENDPOINTS)], { stdout: 'pipe', stderr: 'inherit' });
const reader = receiversProc.stdout.getReader();
let line = '';
while (!line.includes('\n')) {
  const { value, done } = await reader.read();
  if (done) throw new Error('receivers exited');
  line += new TextDecoder().decode(value);
}
const ports = JSON.parse(line.trim()) as number[];

function eventJson(i: number, at: number): string {
  const p = PROVINCES[i % PROVINCES.length]!;
  const row: EventRow = {
    id: `evt_bench${String(i).padStart(8, '0')}`,
    sourceName: 'waze',
    sourceId: `8c1d${i.toString(16).padStart(12, '0')}-bench`,
    type: EVENT_TYPES[i % 4]!,
    subtype: 'accident_major',
    severity: 'major',
    status: 'active',
    plate: p.plate,
    district: 'Şişli',
    lat: p.lat,
    lon: p.lon,
    geometry: i % 4 === 1 ? { type: 'LineString', coordinates: [[p.lon, p.lat], [p.lon + 0.01, p.lat + 0.01], [p.lon + 0.02, p.lat + 0.015]] } : null,
    road: 'Barbaros Bulvarı',
    description: 'Kaza: sağ şerit kapalı, trafik yoğun. Accident, right lane closed.',
    jam: i % 4 === 1 ? { speed_kmh: 12, length_m: 850, delay_s: 240, level: 3 } : null,
    confidence: 0.8,
    reportedAt: at - 60_000,
    firstSeenAt: at,
    lastSeenAt: at,
    updatedAt: at,
    clearedAt: null,
    cells: '',
    missedScans: 0,
    rev: 0,
  };
  return JSON.stringify(toApiEvent(row));
}

function pct(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? Number.NaN;
}

/** The receivers share one process: any port answers for all of them. */
async function receiverCount(): Promise<number> {
  return (await (await fetch(`http://127.0.0.1:${ports[0]}/__count`)).json()) as number;
}

async function runScenario(name: string, batches: number, interval: number): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'trafik-bench-wh-'));
  const path = join(dir, 'trafik.db');
  const main = openDatabase(path);
  applyMigrations(main.db);
  main.sqlite.query("INSERT INTO api_keys (id, hash, prefix, plan, name, created_at) VALUES ('key_bench', 'h', 'trk_live_b…', 'enterprise', 'bench', ?)").run(Date.now());
  for (const port of ports) await addEndpoint(main.sqlite, { keyId: 'key_bench', url: `http://127.0.0.1:${port}/hook` }, { now: Date.now(), allowPrivate: true });
  const endpointIds = main.sqlite.query<{ id: string }, []>('SELECT id FROM webhook_endpoints').all().map((r) => r.id);

  // The scanner's connection (default busy timeout), separate from the worker's.
  const writer = new Database(path, { strict: true });
  writer.exec('PRAGMA busy_timeout = 5000; PRAGMA synchronous = NORMAL');
  const workerDb = openDatabase(path, { busyTimeoutMs: 0 });
  const worker = startWebhookWorker({
    db: workerDb.sqlite,
    allowPrivate: true,
    ...(CONCURRENCY ? { concurrency: CONCURRENCY } : {}),
    ...(PER_ENDPOINT ? { perEndpointConcurrency: PER_ENDPOINT } : {}),
  });

  const commitAt = new Map<number, number>();
  const payloads = Array.from({ length: CHANGES }, (_, i) => eventJson(i, Date.now()));
  const insert = writer.prepare('INSERT INTO event_changes (event_id, change, at, scan_id, payload) VALUES (?, ?, ?, NULL, ?) RETURNING seq');
  const perBatch = Math.ceil(CHANGES / batches);
  const expected = CHANGES * ENDPOINTS;
  let maxStall = 0;
  let lastBeat = performance.now();
  const beat = setInterval(() => {
    const t = performance.now();
    maxStall = Math.max(maxStall, t - lastBeat - 5);
    lastBeat = t;
  }, 5);
  const t0 = Date.now();
  const cpu0 = process.cpuUsage();
  let made = 0;
  for (let b = 0; b < batches; b++) {
    const now = Date.now();
    const seqs: number[] = [];
    // As the scanner commits: one transaction, written in chunks of 500 with an event-loop turn between.
    writer.exec('BEGIN IMMEDIATE');
    for (let i = 0; i < perBatch && made < CHANGES; i++, made++) {
      seqs.push((insert.get(`evt_bench${String(made).padStart(8, '0')}`, made % 3 === 0 ? 'updated' : 'created', now, payloads[made]!) as { seq: number }).seq);
      if ((i + 1) % 500 === 0) await new Promise((r) => setImmediate(r));
    }
    writer.exec('COMMIT');
    const committed = Date.now();
    for (const s of seqs) commitAt.set(s, committed);
    worker.wake();
    if (b < batches - 1) await Bun.sleep(Math.max(0, t0 + (b + 1) * interval - Date.now()));
  }
  const deadline = Date.now() + 300_000;
  while ((await receiverCount()) < expected && Date.now() < deadline) await Bun.sleep(100);
  clearInterval(beat);
  const cpu = process.cpuUsage(cpu0);
  const wall = Date.now() - t0;
  await worker.stop();

  const receipts = (await (await fetch(`http://127.0.0.1:${ports[0]}/__receipts`)).json()) as (string | number)[];
  const firstReceipt = new Map<string, number>();
  for (let i = 0; i < receipts.length; i += 2) {
    const id = receipts[i] as string;
    if (!firstReceipt.has(id)) firstReceipt.set(id, receipts[i + 1] as number);
  }
  const lags: number[] = [];
  let lastReceipt = 0;
  for (const [id, t] of firstReceipt) {
    const seq = Number(id.slice(id.lastIndexOf('_') + 1));
    lags.push(t - commitAt.get(seq)!);
    lastReceipt = Math.max(lastReceipt, t);
  }
  lags.sort((a, b) => a - b);
  const firstCommit = Math.min(...commitAt.values());
  const lastCommit = Math.max(...commitAt.values());
  const rows = main.sqlite.query<{ status: string; n: number }, []>('SELECT status, COUNT(*) AS n FROM webhook_deliveries GROUP BY status').all();
  const span = (lastReceipt - firstCommit) / 1000;
  console.log(
    `${name}: ${CHANGES} changes × ${endpointIds.length} endpoints = ${expected} deliveries; received ${firstReceipt.size} unique (${receipts.length / 2 - firstReceipt.size} duplicates)`,
  );
  console.log(
    `  commits spread over ${((lastCommit - firstCommit) / 1000).toFixed(1)} s; last receipt ${span.toFixed(2)} s after the first commit → ${Math.round(firstReceipt.size / span)} deliveries/s overall`,
  );
  console.log(`  lag commit→receipt: p50 ${pct(lags, 50)} ms, p99 ${pct(lags, 99)} ms, max ${lags[lags.length - 1]} ms; worst event-loop stall in the worker process ${maxStall.toFixed(0)} ms`);
  console.log(`  worker process CPU: ${((cpu.user + cpu.system) / 1000 / wall * 100).toFixed(0)} % of one core over ${(wall / 1000).toFixed(1)} s (user ${(cpu.user / 1e6).toFixed(1)} s, system ${(cpu.system / 1e6).toFixed(1)} s)`);
  console.log(`  rows: ${rows.map((r) => `${r.status} ${r.n}`).join(', ')}`);
  writer.close();
  workerDb.sqlite.close();
  main.sqlite.close();
  rmSync(dir, { recursive: true, force: true });
}

try {
  console.log(`bench/webhooks: ${CHANGES} changes, ${ENDPOINTS} endpoints, receivers in another process${pin(1).length ? ' (pinned to CPU 1)' : ''}`);
  await runScenario(`scans (${BATCHES} commits of ${Math.ceil(CHANGES / BATCHES)}, every ${INTERVAL} ms)`, BATCHES, INTERVAL);
  await runScenario(`sustained (${BATCHES} commits of ${Math.ceil(CHANGES / BATCHES)}, every ${INTERVAL / 2} ms)`, BATCHES, INTERVAL / 2);
  await runScenario('burst (all in one commit)', 1, 0);
} finally {
  receiversProc.kill();
}

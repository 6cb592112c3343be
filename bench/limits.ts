/**
 * The limiter's cost on the hot path, against Bun.serve baselines returning the same bytes:
 *  (a) GET /api/v1/events?limit=100 on 5,000 seeded events through the real `trafik serve`
 *      (limiter, key check, Free quota counting and its write-behind all on), clients spread over
 *      10,000 addresses in X-Forwarded-For from a trusted loopback proxy (TRUST_PROXY=127.0.0.1);
 *  (b) the 429 path: one address far over the default 60 a minute, every request refused.
 * 10,000 addresses at 60 a minute allow only 10,000 req/s without refusals, a fraction of what a
 * core serves: (a) runs on its own `trafik serve` with RATE_LIMIT_PER_MINUTE=1000, so nobody
 * reaches the limit while the limiter does the same work per request; (b) runs on one with the
 * defaults.
 * Baselines, each its own process:
 *  - `raw`: the same body with only its content type (bench/lib/raw-server.ts);
 *  - `raw+headers`: the same body and the same response headers trafik sent (CONTRACT §1/§4 make
 *    ~10 of them mandatory), also bench/lib/raw-server.ts;
 *  - `floor`: the least any server can do per request and still answer as the contract requires
 *    (bench/lib/floor-server.ts): client address, request id, key and negotiation headers read, a
 *    per-client count, the same headers with per-request values. `floor / raw` bounds what any
 *    implementation of the contract can reach on this runtime.
 *
 * Servers pinned to CPU 0, wrk (another process) to CPU 1; warm-up, then all runs in turn for
 * several rounds; medians. Besides req/s, each run reports the server's CPU time per request
 * (utime+stime from /proc), which stays meaningful when other work shares the machine.
 *   bun bench/limits.ts [--seconds 8] [--rounds 3] [--connections 64]
 */
import { copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { load, median, pin, waitForHttp, type LoadResult } from './lib/load.ts';
import { seedDatabase } from './lib/seed.ts';
import { spawnServe } from './lib/serve-process.ts';

await main();

async function main(): Promise<void> {
  const arg = (name: string, fallback: number) => {
    const i = process.argv.indexOf(`--${name}`);
    return i === -1 ? fallback : Number(process.argv[i + 1]);
  };
  const seconds = arg('seconds', 8);
  const rounds = arg('rounds', 3);
  const connections = arg('connections', 64);
  const CLIENTS = 10_000;
  const PATH = '/api/v1/events?limit=100';

  const dir = mkdtempSync(join(tmpdir(), 'trafik-bench-limits-'));
  const dbPath = join(dir, 'trafik.db');
  seedDatabase(dbPath, 5000);

  // wrk Lua: 10,000 prebuilt requests, each from another client address (10.0.0.0/16 and up).
  const xffScript = join(dir, 'xff.lua');
  writeFileSync(
    xffScript,
    `local reqs = {}
local n = ${CLIENTS}
local i = 0
init = function(args)
  for k = 0, n - 1 do
    local ip = "10." .. (math.floor(k / 65536) % 256) .. "." .. (math.floor(k / 256) % 256) .. "." .. (k % 256)
    reqs[k] = wrk.format("GET", "${PATH}", { ["X-Forwarded-For"] = ip })
  end
end
request = function()
  i = (i + 1) % n
  return reqs[i]
end
`,
  );

  const ports = { trafik: 3711, rawPage: 3712, raw429: 3713, rawPageHeaders: 3714, raw429Headers: 3715, trafikPage: 3716, floorPage: 3717, floor429: 3718 };
  const PAGE_LIMIT = 1000;
  // The default quota: 1,000 a month per address (each address makes ~150 requests here).
  // Each server gets its own copy of the seeded database: two on one file would contend for its
  // write lock (quota write-behind) and scan it twice at start.
  const serve = (port: number, perMinute: number) => {
    const own = join(dir, `trafik-${port}.db`);
    copyFileSync(dbPath, own);
    return spawnServe({ port, dbPath: own, replayDir: dir, env: { TRUST_PROXY: '127.0.0.1', RATE_LIMIT_PER_MINUTE: String(perMinute), FREE_MONTHLY_QUOTA: '1000' } });
  };
  const trafik = serve(ports.trafik, 60);
  const trafikPage = serve(ports.trafikPage, PAGE_LIMIT);
  const raws: ReturnType<typeof Bun.spawn>[] = [];
  try {
    const base = `http://127.0.0.1:${ports.trafik}`;
    const pageBase = `http://127.0.0.1:${ports.trafikPage}`;
    await waitForHttp(`${base}/api/v1/health`);
    await waitForHttp(`${pageBase}/api/v1/health`);
    await Bun.sleep(500);

    // Uncompressed, as wrk asks for it (it sends no Accept-Encoding).
    const page = await fetch(`${pageBase}${PATH}`, { headers: { 'x-forwarded-for': '192.0.2.1', 'accept-encoding': 'identity' } });
    const pageBytes = new Uint8Array(await page.arrayBuffer());
    const body = JSON.parse(new TextDecoder().decode(pageBytes));
    if (page.status !== 200 || body.data.length !== 100) throw new Error(`unexpected page: ${page.status}, ${body.data?.length} items`);
    if (page.headers.get('x-ratelimit-remaining') !== String(PAGE_LIMIT - 1) || page.headers.get('x-quota-remaining') !== '999') throw new Error('limiter not on the path');
    writeFileSync(join(dir, 'page.json'), pageBytes);
    writeFileSync(join(dir, 'page-headers.json'), JSON.stringify(responseHeaders(page)));

    // Exhaust the loopback address (no X-Forwarded-For: the proxy itself is the client).
    let refused: Response | null = null;
    for (let i = 0; i < 61 && refused === null; i++) {
      const r = await fetch(`${base}${PATH}`, { headers: { 'accept-encoding': 'identity' } });
      if (r.status === 429) refused = r;
      else await r.arrayBuffer();
    }
    if (refused === null) throw new Error('no 429 after 61 requests');
    const refusedBytes = new Uint8Array(await refused.arrayBuffer());
    writeFileSync(join(dir, '429.json'), refusedBytes);
    writeFileSync(join(dir, '429-headers.json'), JSON.stringify(responseHeaders(refused)));

    const rawServer = join(import.meta.dir, 'lib/raw-server.ts');
    const spawnRaw = (args: string[]) => raws.push(Bun.spawn([...pin(0), 'bun', ...args], { stdout: 'ignore', stderr: 'inherit' }));
    spawnRaw([rawServer, String(ports.rawPage), '/api/v1/events', join(dir, 'page.json'), page.headers.get('content-type')!]);
    spawnRaw([rawServer, String(ports.raw429), '/api/v1/events', join(dir, '429.json'), 'application/problem+json', '429']);
    spawnRaw([rawServer, String(ports.rawPageHeaders), '/api/v1/events', join(dir, 'page.json'), page.headers.get('content-type')!, '200', join(dir, 'page-headers.json')]);
    spawnRaw([rawServer, String(ports.raw429Headers), '/api/v1/events', join(dir, '429.json'), 'application/problem+json', '429', join(dir, '429-headers.json')]);
    const floor = (port: number, perMinute: number) =>
      spawnRaw([join(import.meta.dir, 'lib/floor-server.ts'), String(port), String(perMinute), '127.0.0.1', join(dir, 'page.json'), join(dir, 'page-headers.json'), join(dir, '429.json'), join(dir, '429-headers.json')]);
    floor(ports.floorPage, PAGE_LIMIT);
    floor(ports.floor429, 60);
    for (const p of [ports.rawPage, ports.raw429, ports.rawPageHeaders, ports.raw429Headers, ports.floorPage, ports.floor429]) await waitForHttp(`http://127.0.0.1:${p}${PATH}`).catch(() => {});
    await Bun.sleep(200);
    // The floor answers what trafik answers: same body, same header names.
    const floorPage = await fetch(`http://127.0.0.1:${ports.floorPage}${PATH}`, { headers: { 'x-forwarded-for': '192.0.2.1' } });
    const floorBytes = new Uint8Array(await floorPage.arrayBuffer());
    if (floorPage.status !== 200 || Buffer.compare(floorBytes, pageBytes) !== 0) throw new Error('floor page differs from trafik page');
    const headerNames = (r: Response) => [...r.headers.keys()].filter((k) => k !== 'date' && k !== 'content-length').sort().join(',');
    if (headerNames(floorPage) !== headerNames(page)) throw new Error(`floor page headers differ: ${headerNames(floorPage)} vs ${headerNames(page)}`);
    for (let i = 0; i < 61; i++) await (await fetch(`http://127.0.0.1:${ports.floor429}${PATH}`)).arrayBuffer();
    const floorRefused = await fetch(`http://127.0.0.1:${ports.floor429}${PATH}`);
    const withoutId = (text: string, r: Response) => text.replace(r.headers.get('x-request-id')!, '');
    if (floorRefused.status !== 429 || headerNames(floorRefused) !== headerNames(refused) || withoutId(await floorRefused.text(), floorRefused) !== withoutId(new TextDecoder().decode(refusedBytes), refused)) {
      throw new Error(`floor 429 differs from trafik's: ${floorRefused.status} ${headerNames(floorRefused)}`);
    }

    const [pRaw, p429, pRawH, p429H, pFloorPage, pFloor429] = raws.map((r) => r.pid) as [number, number, number, number, number, number];
    const targets = {
      'trafik page, 10k clients': { url: `${pageBase}${PATH}`, script: xffScript, pid: trafikPage.pid },
      'raw page': { url: `http://127.0.0.1:${ports.rawPage}${PATH}`, script: xffScript, pid: pRaw },
      'raw+headers page': { url: `http://127.0.0.1:${ports.rawPageHeaders}${PATH}`, script: xffScript, pid: pRawH },
      'floor page': { url: `http://127.0.0.1:${ports.floorPage}${PATH}`, script: xffScript, pid: pFloorPage },
      'trafik 429': { url: `${base}${PATH}`, script: undefined, pid: trafik.pid },
      'raw 429': { url: `http://127.0.0.1:${ports.raw429}${PATH}`, script: undefined, pid: p429 },
      'raw+headers 429': { url: `http://127.0.0.1:${ports.raw429Headers}${PATH}`, script: undefined, pid: p429H },
      'floor 429': { url: `http://127.0.0.1:${ports.floor429}${PATH}`, script: undefined, pid: pFloor429 },
    };
    type Name = keyof typeof targets;
    const names = Object.keys(targets) as Name[];
    console.log(
      `page: ${pageBytes.byteLength} bytes (100 of ${body.pagination.total} events); 429: ${refusedBytes.byteLength} bytes; wrk -t1 -c${connections}, ${seconds}s x ${rounds} rounds, 2 s warm-up each`,
    );
    const measure = async (n: Name, secs: number) => {
      const t = targets[n];
      const before = cpuMs(t.pid);
      const r = await load(t.url, { seconds: secs, connections, script: t.script });
      return { ...r, cpuUs: ((cpuMs(t.pid) - before) * 1000) / r.requests };
    };
    for (const n of names) await measure(n, 2);
    const results = Object.fromEntries(names.map((n) => [n, [] as (LoadResult & { cpuUs: number })[]])) as Record<Name, (LoadResult & { cpuUs: number })[]>;
    for (let r = 0; r < rounds; r++) for (const n of names) results[n].push(await measure(n, seconds));

    const rps = (n: Name) => median(results[n].map((x) => x.rps));
    const cpu = (n: Name) => median(results[n].map((x) => x.cpuUs));
    const non2xx = (n: Name) => results[n].reduce((a, x) => a + x.non2xx, 0);
    for (const n of names) {
      const note = n === 'trafik page, 10k clients' ? `; non-2xx ${non2xx(n)} (must be 0)` : n === 'trafik 429' ? `; 429s ${non2xx(n)} of ${results[n].reduce((a, x) => a + x.requests, 0)}` : '';
      console.log(
        `${n.padEnd(26)} ${rps(n).toFixed(0).padStart(7)} req/s  p99 ${median(results[n].map((x) => x.p99Ms)).toFixed(2).padStart(6)} ms  cpu ${cpu(n).toFixed(1).padStart(5)} µs/req  (rounds ${results[n].map((x) => x.rps.toFixed(0)).join(', ')}${note})`,
      );
    }
    const ratios = (a: Name, b: Name) => `${(rps(a) / rps(b)).toFixed(3)} by req/s, ${(cpu(b) / cpu(a)).toFixed(3)} by CPU per request`;
    console.log(`(a) page with limiter / raw:          ${ratios('trafik page, 10k clients', 'raw page')}   (target >= 0.75)`);
    console.log(`    page with limiter / raw+headers:  ${ratios('trafik page, 10k clients', 'raw+headers page')}`);
    console.log(`    page with limiter / floor:        ${ratios('trafik page, 10k clients', 'floor page')}`);
    console.log(`    floor / raw (the best possible):  ${ratios('floor page', 'raw page')}`);
    console.log(`(b) 429 / raw:                        ${ratios('trafik 429', 'raw 429')}   (target >= 0.75)`);
    console.log(`    429 / raw+headers:                ${ratios('trafik 429', 'raw+headers 429')}`);
    console.log(`    429 / floor:                      ${ratios('trafik 429', 'floor 429')}`);
    console.log(`    floor / raw (the best possible):  ${ratios('floor 429', 'raw 429')}`);
    for (const n of ['trafik page, 10k clients', 'floor page'] as const) {
      if (non2xx(n) > 0) console.log(`WARNING: some clients reached a limit during '${n}'; its numbers include refusals`);
    }
  } finally {
    trafik.kill('SIGTERM');
    trafikPage.kill('SIGTERM');
    for (const r of raws) r.kill();
    await trafik.exited;
    await trafikPage.exited;
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The response headers trafik sent, minus those Bun adds itself. */
function responseHeaders(res: Response): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of res.headers) if (k !== 'date' && k !== 'content-length' && k !== 'x-request-id' && k !== 'content-encoding') out[k] = v;
  return out;
}

/** utime + stime of a process, in ms (Linux); NaN elsewhere. */
function cpuMs(pid: number): number {
  const f = `/proc/${pid}/stat`;
  if (!existsSync(f)) return Number.NaN;
  const fields = readFileSync(f, 'utf8').split(') ')[1]!.split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100; // USER_HZ is 100 on Linux
}

/**
 * GET /api/v1/events?limit=100 on a seeded database of 5,000 events, served by the real
 * `trafik serve` process, against a raw Bun.serve returning the very same bytes; each is loaded
 * in turn by wrk from another process (server on CPU 0, wrk on CPU 1), several rounds, medians.
 *   bun bench/http.ts [--seconds 8] [--rounds 3]
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { load, median, pin, waitForHttp, type LoadResult } from './lib/load.ts';
import { seedDatabase } from './lib/seed.ts';
import { spawnServe } from './lib/serve-process.ts';

const arg = (name: string, fallback: number) => {
  const i = process.argv.indexOf(`--${name}`);
  return i === -1 ? fallback : Number(process.argv[i + 1]);
};
const seconds = arg('seconds', 8);
const rounds = arg('rounds', 3);
const connections = 64;
const dir = mkdtempSync(join(tmpdir(), 'trafik-bench-'));
const dbPath = join(dir, 'trafik.db');
seedDatabase(dbPath, 5000);

const PATH = '/api/v1/events?limit=100';
const spread = join(dir, 'spread.lua');
writeFileSync(
  spread,
  `local reqs = {}
local i = 0
init = function(args)
  for k = 0, 15 do reqs[k] = wrk.format("GET", "${PATH}", { ["X-Forwarded-For"] = "10.0.0." .. k }) end
end
request = function()
  i = (i + 1) % 16
  return reqs[i]
end
`,
);
const trafikPort = 3701;
const rawPort = 3702;
// The limiter stays on but out of the way (bench/limits.ts measures it): a trusted local proxy
// spreads the requests over 16 addresses, each allowed the maximum per minute.
const trafik = spawnServe({
  port: trafikPort,
  dbPath,
  replayDir: dir,
  env: { TRUST_PROXY: '127.0.0.1', RATE_LIMIT_PER_MINUTE: '1000000', FREE_MONTHLY_QUOTA: '1000000000' },
});
let raw: ReturnType<typeof Bun.spawn> | undefined;
try {
  await waitForHttp(`http://127.0.0.1:${trafikPort}/api/v1/health`);
  // The scan at start finds nothing in the empty replay folder and clears nothing it did not see.
  await Bun.sleep(500);
  const res = await fetch(`http://127.0.0.1:${trafikPort}${PATH}`);
  const bytes = new Uint8Array(await res.arrayBuffer());
  const body = JSON.parse(new TextDecoder().decode(bytes));
  if (res.status !== 200 || body.data.length !== 100) throw new Error(`unexpected page: ${res.status}, ${body.data?.length} items`);
  writeFileSync(join(dir, 'page.json'), bytes);
  raw = Bun.spawn([...pin(0), 'bun', join(import.meta.dir, 'lib/raw-server.ts'), String(rawPort), '/api/v1/events', join(dir, 'page.json'), res.headers.get('content-type')!], { stdout: 'ignore', stderr: 'inherit' });
  await waitForHttp(`http://127.0.0.1:${rawPort}${PATH}`);

  console.log(`body: ${bytes.byteLength} bytes, 100 events of ${body.pagination.total}; wrk -c${connections}, ${seconds}s x ${rounds} rounds, warm-up 2 s each`);
  await load(`http://127.0.0.1:${rawPort}${PATH}`, { seconds: 2, connections, script: spread });
  await load(`http://127.0.0.1:${trafikPort}${PATH}`, { seconds: 2, connections, script: spread });
  const results: { raw: LoadResult[]; trafik: LoadResult[] } = { raw: [], trafik: [] };
  for (let r = 0; r < rounds; r++) {
    results.raw.push(await load(`http://127.0.0.1:${rawPort}${PATH}`, { seconds, connections, script: spread }));
    results.trafik.push(await load(`http://127.0.0.1:${trafikPort}${PATH}`, { seconds, connections, script: spread }));
  }
  const row = (name: string, xs: LoadResult[]) =>
    `${name.padEnd(22)} ${median(xs.map((x) => x.rps)).toFixed(0).padStart(9)} req/s   p99 ${median(xs.map((x) => x.p99Ms)).toFixed(2).padStart(7)} ms   (rounds: ${xs.map((x) => x.rps.toFixed(0)).join(', ')}; non-2xx ${xs.reduce((a, x) => a + x.non2xx, 0)})`;
  console.log(row('raw Bun.serve', results.raw));
  console.log(row('trafik /api/v1/events', results.trafik));
  const ratio = median(results.trafik.map((x) => x.rps)) / median(results.raw.map((x) => x.rps));
  console.log(`ratio trafik/raw: ${ratio.toFixed(3)} (target >= 0.8)`);
} finally {
  trafik.kill('SIGTERM');
  raw?.kill();
  await trafik.exited;
  rmSync(dir, { recursive: true, force: true });
}

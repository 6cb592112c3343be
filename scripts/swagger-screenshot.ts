/**
 * Proves the Swagger UI works with no internet, as a person would see it: runs dist/trafik from
 * an empty folder and Debian's headless Chromium inside a fresh network namespace that has only
 * loopback (`unshare --net`), waits for the operations to render, checks the DOM lists them, and
 * saves a screenshot.
 *
 *   bun run build && bun scripts/swagger-screenshot.ts [out.png]
 */
import { $ } from 'bun';
import { copyFileSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

const out = resolve(process.argv[2] ?? 'dist/swagger.png');
const bin = resolve('dist/trafik');
if (!(await Bun.file(bin).exists())) throw new Error('dist/trafik is missing: run `bun run build` first');
const chromium = Bun.which('chromium');
if (chromium === null) throw new Error('Debian chromium is missing: apt-get install chromium');

const dir = mkdtempSync(join(tmpdir(), 'trafik-swagger-'));
copyFileSync(bin, join(dir, 'trafik'));
const port = 3456;
const flags = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  `--user-data-dir=${join(dir, 'profile')}`,
  '--window-size=1280,1600',
  '--virtual-time-budget=15000',
].join(' ');
const url = `http://127.0.0.1:${port}/swagger`;
// Everything below runs in a network namespace where only 127.0.0.1 exists.
const inner = `
set -e
ip link set lo up
cd ${dir}
SOURCES=replay REPLAY_DIR=${dir} PORT=${port} HOST=127.0.0.1 ./trafik > server.log 2>&1 &
for i in $(seq 1 50); do grep -q '"listening"' server.log && break; sleep 0.1; done
if ping -c1 -W1 1.1.1.1 >/dev/null 2>&1; then echo "network is NOT off"; exit 3; fi
${chromium} ${flags} --dump-dom ${url} > dom.html 2>/dev/null
${chromium} ${flags} --screenshot=${out} ${url} 2>/dev/null
kill %1
`;
await $`unshare --net bash -c ${inner}`;
const dom = await Bun.file(join(dir, 'dom.html')).text();
const operations = [...dom.matchAll(/class="opblock-summary-path"[^>]*data-path="([^"]+)"/g)].map((m) => m[1]);
console.log(`operations rendered: ${operations.length} ${JSON.stringify(operations)}`);
console.log(`screenshot: ${out}`);
if (operations.length < 4) process.exit(1);

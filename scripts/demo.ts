#!/usr/bin/env bun
/**
 * `bun run demo`: the real service (`trafik serve`) on the offline replay source, reading the
 * synthetic Turkish recordings in demo/replay/ — no internet, no keys. Prints the URLs to try once
 * the server listens, and a line per scan. Ctrl-C stops it (the server finishes its scan first).
 *
 * Fixed: SOURCES=replay. Defaults, each overridable from the environment:
 *   REPLAY_DIR=demo/replay  DATABASE_PATH=./data/demo.db  HOST=127.0.0.1  PORT=3000
 */
import { join, resolve } from 'node:path';

const ROOT = join(import.meta.dir, '..');
const env: Record<string, string | undefined> = {
  ...process.env,
  SOURCES: 'replay',
  REPLAY_DIR: resolve(process.env.REPLAY_DIR ?? join(ROOT, 'demo', 'replay')),
  DATABASE_PATH: process.env.DATABASE_PATH ?? './data/demo.db',
  HOST: process.env.HOST ?? '127.0.0.1',
  PORT: process.env.PORT ?? '3000',
  LOG_LEVEL: 'info',
};

const child = Bun.spawn([process.execPath, join(ROOT, 'src', 'main.ts'), 'serve'], { env, stdout: 'pipe', stderr: 'inherit', stdin: 'ignore' });
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => child.kill(signal));

const say = (line: string) => process.stdout.write(`${line}\n`);

function banner(base: string): void {
  say('');
  say(`trafik demo — ${base}  (synthetic recordings from ${env.REPLAY_DIR}; see demo/README.md)`);
  say('');
  for (const [path, what] of [
    ['/api/v1/events', 'active events, newest first'],
    ['/api/v1/events/istanbul', 'one province (any spelling: İstanbul, ISTANBUL, 34)'],
    ['/api/v1/events?type=accident,road_closure&limit=5', 'filtered by type'],
    ['/api/v1/events?city=ankara&format=geojson', 'GeoJSON'],
    ['/api/v1/events?near=38.42,27.14&radius_km=15', 'around a point (İzmir)'],
    ['/api/v1/stats', 'counts by type, severity and province'],
    ['/api/v1/health', 'service and scanner health'],
    ['/swagger', 'API docs'],
  ] as const) {
    say(`  ${`${base}${path}`.padEnd(72)} ${what}`);
  }
  say('');
  say(`  database: ${env.DATABASE_PATH} — Ctrl-C to stop`);
  say('');
}

// The server logs JSON lines; show the few a newcomer needs, and every warning or error.
const decoder = new TextDecoder();
let pending = '';
for await (const chunk of child.stdout) {
  pending += decoder.decode(chunk, { stream: true });
  let nl: number;
  while ((nl = pending.indexOf('\n')) !== -1) {
    const line = pending.slice(0, nl);
    pending = pending.slice(nl + 1);
    let rec: Record<string, unknown>;
    try {
      rec = JSON.parse(line) as Record<string, unknown>;
    } catch {
      say(line);
      continue;
    }
    if (rec.msg === 'listening') {
      const host = String(rec.host);
      banner(`http://${host === '0.0.0.0' ? '127.0.0.1' : host}:${String(rec.port)}`);
    } else if (rec.msg === 'scan finished') {
      say(`scan ${String(rec.id)}: ${String(rec.status)}, ${String(rec.items)} items, created ${String(rec.created)}, updated ${String(rec.updated)}, cleared ${String(rec.cleared)} (${String(rec.duration_ms)} ms)`);
    } else if (rec.level === 'warn' || rec.level === 'error' || rec.msg === 'stopped') {
      say(`${String(rec.level)}: ${String(rec.msg)} ${JSON.stringify(Object.fromEntries(Object.entries(rec).filter(([k]) => !['time', 'level', 'msg'].includes(k))))}`);
    }
  }
}
process.exit(await child.exited);

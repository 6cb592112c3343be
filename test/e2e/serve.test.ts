import { afterAll, beforeAll, expect, test } from 'bun:test';
import { Database } from 'bun:sqlite';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Webhook } from 'standardwebhooks';

// The whole product through its real processes: the keys and webhooks CLIs, `trafik serve`
// scanning a replay recording every second, a local webhook receiver, and HTTP clients.
const ROOT = join(import.meta.dir, '..', '..');
const dir = mkdtempSync(join(tmpdir(), 'trafik-e2e-'));
const env = {
  PATH: process.env.PATH ?? '',
  HOME: process.env.HOME ?? '',
  DATABASE_PATH: join(dir, 'db', 'trafik.db'),
  SOURCES: 'replay',
  REPLAY_DIR: join(dir, 'replay'),
  WEBHOOK_ALLOW_PRIVATE: 'true',
  SCAN_INTERVAL_SECONDS: '1',
  HOST: '127.0.0.1',
  PORT: '0',
};
interface Received {
  headers: Record<string, string>;
  body: string;
}
const received: Received[] = [];
let receiver: ReturnType<typeof Bun.serve>;
let server: ReturnType<typeof Bun.spawn> | null = null;
let base = '';
let key = '';
let secret = '';
let out = '';

function cli(...args: string[]): { code: number; stdout: string; stderr: string } {
  const r = Bun.spawnSync(['bun', join(ROOT, 'src', 'main.ts'), ...args], { env, cwd: dir });
  return { code: r.exitCode ?? -1, stdout: r.stdout.toString(), stderr: r.stderr.toString() };
}

async function until<T>(what: string, fn: () => T | undefined | false | Promise<T | undefined | false>, ms = 15_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}; server output:\n${out.slice(-3000)}`);
    await Bun.sleep(50);
  }
}

beforeAll(async () => {
  mkdirSync(join(dir, 'replay', 'waze'), { recursive: true });
  copyFileSync(join(ROOT, 'test/fixtures/upstream/synthetic-waze-georss-istanbul.json'), join(dir, 'replay', 'waze', 'istanbul.json'));
  receiver = Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    async fetch(req) {
      received.push({ headers: Object.fromEntries(req.headers), body: await req.text() });
      return new Response(null, { status: 204 });
    },
  });
  const created = cli('keys', 'create', '--plan', 'enterprise', '--name', 'e2e', '--json');
  expect(created.code).toBe(0);
  const k = JSON.parse(created.stdout) as { id: string; key: string };
  key = k.key;
  const added = cli('webhooks', 'add', '--key', k.id, '--url', `http://127.0.0.1:${receiver.port}/hook`, '--json');
  expect(added.code).toBe(0);
  secret = (JSON.parse(added.stdout) as { secret: string }).secret;

  server = Bun.spawn(['bun', join(ROOT, 'src', 'main.ts'), 'serve'], { env, cwd: dir, stdout: 'pipe', stderr: 'pipe' });
  const reader = (server.stdout as ReadableStream<Uint8Array>).getReader();
  const dec = new TextDecoder();
  void (async () => {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      out += dec.decode(value);
    }
  })();
  const port = await until('listening', () => /"msg":"listening".*?"port":(\d+)/.exec(out)?.[1]);
  base = `http://127.0.0.1:${port}`;
}, 60_000);

afterAll(() => {
  server?.kill('SIGKILL');
  receiver?.stop(true);
  rmSync(dir, { recursive: true, force: true });
});

test('a scan in serve reaches the API, and every created event reaches the webhook signed', async () => {
  const events = await until('events in the API', async () => {
    const body = (await (await fetch(`${base}/api/v1/events?limit=1000`)).json()) as { data: { id: string }[] };
    return body.data.length > 0 && body.data;
  });
  await until('a delivery per event', () => received.length >= events.length);
  const wh = new Webhook(secret);
  const ids = new Set<string>();
  for (const r of received) {
    const msg = wh.verify(r.body, r.headers) as { type: string; data: { id: string } };
    expect(msg.type).toBe('traffic_event.created');
    ids.add(msg.data.id);
  }
  expect([...ids].sort()).toEqual(events.map((e) => e.id).sort());
  // Seen again every second: no further deliveries for unchanged events.
  const n = received.length;
  await Bun.sleep(2500);
  expect(received.length).toBe(n);
});

test('the Enterprise key reads history, the stream and its webhook state from the same server', async () => {
  const auth = { authorization: `Bearer ${key}` };
  const history = await fetch(`${base}/api/v1/events?status=all`, { headers: auth });
  expect(history.status).toBe(200);
  expect(((await history.json()) as { meta: { history: unknown } }).meta.history).toBeDefined();
  const hooks = (await (await fetch(`${base}/api/v1/webhooks`, { headers: auth })).json()) as { data: { last_success_at: string | null }[] };
  expect(hooks.data[0]!.last_success_at).not.toBeNull();
  const ctrl = new AbortController();
  const stream = await fetch(`${base}/api/v1/events/stream`, { headers: { ...auth, 'last-event-id': '0' }, signal: ctrl.signal });
  expect(stream.status).toBe(200);
  const reader = stream.body!.getReader();
  let text = '';
  while (!text.includes('event: traffic_event.created')) text += new TextDecoder().decode((await reader.read()).value);
  ctrl.abort();
  // Free callers are refused, with the rate-limit headers on the refusal too.
  const free = await fetch(`${base}/api/v1/events?status=all`);
  expect(free.status).toBe(403);
  expect(free.headers.get('x-ratelimit-remaining')).toMatch(/^\d+$/);
});

test('a second serve on the same database refuses to start, naming the one that runs', () => {
  const second = cli('serve');
  expect(second.code).toBe(2);
  const lines = second.stderr.trim().split('\n');
  expect(lines).toHaveLength(1);
  expect(lines[0]).toContain('DATABASE_PATH: another trafik serve (pid ');
  expect(lines[0]).toContain(`(pid ${server!.pid} on `);
  // It left the first one alone: still serving.
  return fetch(`${base}/api/v1/health`).then((r) => expect(r.status).toBe(200));
});

const leaseRows = () => {
  const db = new Database(env.DATABASE_PATH, { readonly: true });
  try {
    return db.query<{ pid: number }, []>('SELECT pid FROM leases').all();
  } finally {
    db.close();
  }
};

test('SIGTERM stops it gracefully and gives the lease back', async () => {
  expect(leaseRows()).toEqual([{ pid: server!.pid }]);
  server!.kill('SIGTERM');
  expect(await server!.exited).toBe(0);
  expect(out).toContain('"msg":"stopped"');
  server = null;
  expect(leaseRows()).toEqual([]);
});

test('after a kill -9 the next serve starts at once: the dead holder frees the lease', async () => {
  const start = async () => {
    const p = Bun.spawn(['bun', join(ROOT, 'src', 'main.ts'), 'serve'], { env, cwd: dir, stdout: 'pipe', stderr: 'pipe' });
    const reader = (p.stdout as ReadableStream<Uint8Array>).getReader();
    let text = '';
    // Listening means its SIGTERM handler is installed too.
    while (!text.includes('"msg":"listening"')) {
      const { value, done } = await reader.read();
      if (done) throw new Error(`serve exited before listening: ${text}`);
      text += new TextDecoder().decode(value);
    }
    reader.releaseLock();
    expect(leaseRows()).toEqual([{ pid: p.pid }]);
    return p;
  };
  const killed = await start();
  killed.kill('SIGKILL');
  await killed.exited;
  expect(leaseRows()).toEqual([{ pid: killed.pid }]);
  const next = await start();
  next.kill('SIGTERM');
  expect(await next.exited).toBe(0);
  expect(leaseRows()).toEqual([]);
});

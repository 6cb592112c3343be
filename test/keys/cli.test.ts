import { afterEach, describe, expect, test } from 'bun:test';
import { cli, readDb, startServer, storedQuota, workspace, type LiveServer, type Workspace } from './live.ts';

let ws: Workspace | null = null;
let server: LiveServer | null = null;
afterEach(async () => {
  if (server !== null && server.proc.exitCode === null) await server.stop('SIGKILL');
  server = null;
  ws?.cleanup();
  ws = null;
});

const oneLine = (s: string) => s.trimEnd().split('\n').length === 1 && s.trim() !== '';

describe('trafik keys against a running server', () => {
  test('create → use → revoke → 401 within the documented 2 s; list and --json', async () => {
    ws = workspace();
    server = await startServer(ws);

    const created = await cli(ws, ['keys', 'create', '--plan', 'free', '--name', 'mobile app']);
    expect(created.code).toBe(0);
    const m = /^id: (key_[0-9A-Za-z]{16})\nkey: (trk_live_[0-9A-Za-z]{38})\n$/.exec(created.stdout);
    expect(m).not.toBeNull();
    const [, id, key] = m!;
    expect(created.stderr).toContain('shown only once');

    // The running server sees the key the CLI just wrote (a miss is not cached before it exists).
    const use = await fetch(`${server.base}/api/v1/stats`, { headers: { authorization: `Bearer ${key}` } });
    expect(use.status).toBe(200);
    expect(use.headers.get('x-quota-limit')).toBe('1000');
    expect(use.headers.get('x-quota-remaining')).toBe('999');
    expect((await fetch(`${server.base}/api/v1/health`, { headers: { 'x-api-key': key! } })).status).toBeLessThan(600);

    const list = await cli(ws, ['keys', 'list']);
    expect(list.code).toBe(0);
    expect(list.stdout).toContain(id!);
    expect(list.stdout).toContain(`${key!.slice(0, 13)}…`);
    expect(list.stdout).not.toContain(key!);
    expect(list.stdout).toContain('mobile app');

    // last_used_at is written behind within about a second.
    await Bun.sleep(1300);
    const listed = JSON.parse((await cli(ws, ['keys', 'list', '--json'])).stdout) as Record<string, unknown>[];
    expect(listed).toHaveLength(1);
    expect(listed[0]).toMatchObject({ id, plan: 'free', name: 'mobile app', status: 'active', revoked_at: null });
    expect(listed[0]!.last_used_at).toBeString();
    expect(JSON.stringify(listed)).not.toContain(key!);

    const revoked = await cli(ws, ['keys', 'revoke', id!]);
    expect(revoked.code).toBe(0);
    expect(revoked.stdout).toContain(`revoked ${id}`);
    const t0 = Date.now();
    let status = 200;
    while (Date.now() - t0 < 5000) {
      const res = await fetch(`${server.base}/api/v1/stats`, { headers: { authorization: `Bearer ${key}` } });
      status = res.status;
      if (status === 401) {
        expect(res.headers.get('www-authenticate')).toBe('Bearer');
        expect(((await res.json()) as { code: string }).code).toBe('invalid_api_key');
        break;
      }
      await res.arrayBuffer();
      await Bun.sleep(100);
    }
    expect(status).toBe(401);
    expect(Date.now() - t0).toBeLessThanOrEqual(2500);

    const again = await cli(ws, ['keys', 'revoke', id!, '--json']);
    expect(again.code).toBe(0);
    expect(JSON.parse(again.stdout)).toMatchObject({ id, status: 'revoked', already_revoked: true });
  }, 30_000);

  test('--json output of create; an Enterprise key has no quota and no quota headers', async () => {
    ws = workspace({ FREE_MONTHLY_QUOTA: '2' });
    server = await startServer(ws);
    const created = await cli(ws, ['keys', 'create', '--plan', 'enterprise', '--name', 'partner', '--json']);
    expect(created.code).toBe(0);
    const j = JSON.parse(created.stdout) as { id: string; key: string; plan: string; name: string; prefix: string; status: string; created_at: string };
    expect(j).toMatchObject({ plan: 'enterprise', name: 'partner', status: 'active' });
    expect(j.key).toMatch(/^trk_live_/);
    expect(j.prefix).toBe(`${j.key.slice(0, 13)}…`);
    for (let i = 0; i < 4; i++) {
      const r = await fetch(`${server.base}/api/v1/stats`, { headers: { 'x-api-key': j.key } });
      expect(r.status).toBe(200);
      expect(r.headers.get('x-quota-remaining')).toBeNull();
    }
  }, 30_000);

  test('bad input exits non-zero with one line on stderr and nothing on stdout', async () => {
    ws = workspace();
    const cases: [string[], number][] = [
      [['keys'], 2],
      [['keys', 'frobnicate'], 2],
      [['keys', 'create'], 2],
      [['keys', 'create', '--plan', 'gold', '--name', 'x'], 2],
      [['keys', 'create', '--plan', 'free'], 2],
      [['keys', 'create', '--name', 'x'], 2],
      [['keys', 'create', '--plan', 'free', '--name', '   '], 2],
      [['keys', 'create', '--plan', 'free', '--name'], 2],
      [['keys', 'create', '--plan', 'free', '--name', 'x', '--colour', 'red'], 2],
      [['keys', 'create', '--plan', 'free', '--name', 'x', 'extra'], 2],
      [['keys', 'list', 'extra'], 2],
      [['keys', 'list', '--all'], 2],
      [['keys', 'revoke'], 2],
      [['keys', 'revoke', 'a', 'b'], 2],
      [['keys', 'revoke', 'trk_live_not_an_id'], 2],
      [['keys', 'revoke', 'key_0000000000000000'], 2],
    ];
    const results = await Promise.all(cases.map(([args]) => cli(ws!, args)));
    results.forEach((r, i) => {
      const [args, code] = cases[i]!;
      expect({ args, code: r.code, stdout: r.stdout }).toEqual({ args, code, stdout: '' });
      expect({ args, oneLine: oneLine(r.stderr) }).toEqual({ args, oneLine: true });
      expect(r.stderr).toStartWith('trafik: ');
    });
    // Nothing was created by any of them.
    expect(JSON.parse((await cli(ws, ['keys', 'list', '--json'])).stdout)).toEqual([]);
  }, 30_000);
});

describe('a running server', () => {
  test('refuses a key in the query string and enforces a small FREE_MONTHLY_QUOTA', async () => {
    ws = workspace({ FREE_MONTHLY_QUOTA: '5' });
    server = await startServer(ws);
    const refused = await fetch(`${server.base}/api/v1/events?key=trk_live_whatever`);
    expect(refused.status).toBe(400);
    expect(((await refused.json()) as { code: string }).code).toBe('invalid_parameter');
    for (let i = 0; i < 5; i++) expect((await fetch(`${server.base}/api/v1/stats`)).status).toBe(200);
    const over = await fetch(`${server.base}/api/v1/stats`);
    expect(over.status).toBe(403);
    expect(((await over.json()) as { code: string }).code).toBe('quota_exceeded');
  }, 30_000);

  test('SIGTERM loses no count; windows and quotas survive a restart', async () => {
    ws = workspace();
    server = await startServer(ws);
    for (let i = 0; i < 7; i++) expect((await fetch(`${server.base}/api/v1/stats`)).status).toBe(200);
    // Stop at once: the last requests are younger than the one-second write-behind.
    expect(await server.stop('SIGTERM')).toBe(0);
    expect(storedQuota(ws)).toEqual({ 'ip:127.0.0.1': 7 });
    const saved = readDb(ws, (db) => db.query('SELECT bucket, current, previous FROM rate_windows').all()) as { bucket: string; current: number; previous: number }[];
    expect(saved).toHaveLength(1);
    expect(saved[0]!.bucket).toBe('127.0.0.1');
    expect(saved[0]!.current + saved[0]!.previous).toBe(7);

    server = await startServer(ws);
    const res = await fetch(`${server.base}/api/v1/stats`);
    expect(res.headers.get('x-quota-remaining')).toBe(String(1000 - 8));
    // The restored window still counts the 7 requests (fewer only if a minute turned meanwhile).
    expect(Number(res.headers.get('x-ratelimit-remaining'))).toBeLessThan(59);
    expect(server.logs.some((l) => l.includes('restored rate windows'))).toBe(true);
    expect(await server.stop('SIGINT')).toBe(0);
    expect(storedQuota(ws)).toEqual({ 'ip:127.0.0.1': 8 });
  }, 30_000);

  test('kill -9 loses at most the last second of counts', async () => {
    ws = workspace();
    server = await startServer(ws);
    for (let i = 0; i < 5; i++) expect((await fetch(`${server.base}/api/v1/stats`)).status).toBe(200);
    await Bun.sleep(1500); // older than one flush interval: must be on disk
    for (let i = 0; i < 3; i++) expect((await fetch(`${server.base}/api/v1/stats`)).status).toBe(200);
    await server.stop('SIGKILL');
    const n = storedQuota(ws)['ip:127.0.0.1'] ?? 0;
    expect(n).toBeGreaterThanOrEqual(5);
    expect(n).toBeLessThanOrEqual(8);
  }, 30_000);
});

/** `trafik webhooks …` as a subprocess against a real database file (as an operator runs it next to a live server). */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { join } from 'node:path';
import { Webhook } from 'standardwebhooks';
import { insertKey, setup, startReceiver, type Receiver, type Setup } from './helpers.ts';

const MAIN = join(import.meta.dir, '../../src/main.ts');
let s: Setup;
let freeKey: string;
let revokedKey: string;
let rx: Receiver;
let failing: Receiver;

beforeAll(() => {
  s = setup();
  freeKey = insertKey(s.sqlite, 'free');
  revokedKey = insertKey(s.sqlite, 'enterprise', true);
  rx = startReceiver();
  failing = startReceiver({ behaviour: () => new Response('no', { status: 500 }) });
});
afterAll(async () => {
  await rx.stop();
  await failing.stop();
  s.cleanup();
});

async function cli(args: string[], env: Record<string, string> = {}) {
  const proc = Bun.spawn(['bun', MAIN, 'webhooks', ...args], {
    env: { ...process.env, DATABASE_PATH: s.path, LOG_LEVEL: 'error', WEBHOOK_ALLOW_PRIVATE: 'false', ...env },
    stdout: 'pipe',
    stderr: 'pipe',
  });
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  return { stdout, stderr, code };
}

const allow = { WEBHOOK_ALLOW_PRIVATE: 'true' };

describe('trafik webhooks', () => {
  let id = '';
  let secret = '';

  test('add prints the id and the secret (once)', async () => {
    const r = await cli(['add', '--key', s.keyId, '--url', rx.url], allow);
    expect(r.code).toBe(0);
    const lines = r.stdout.trim().split('\n');
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatch(/^id: whk_[0-9A-Za-z]{20}$/);
    expect(lines[1]).toMatch(/^secret: whsec_[A-Za-z0-9+/]{43}=$/);
    id = lines[0]!.slice(4);
    secret = lines[1]!.slice(8);
  });

  test('add --json with filters in any spelling', async () => {
    const r = await cli(['add', '--key', s.keyId, '--url', `${rx.url}?team=ops`, '--types', 'jam,road_closure', '--cities', 'İSTANBUL,06,Antep', '--json'], allow);
    expect(r.code).toBe(0);
    const out = JSON.parse(r.stdout);
    expect(out).toMatchObject({
      key_id: s.keyId,
      url: `${rx.url}?team=ops`,
      status: 'active',
      filters: {
        types: ['jam', 'road_closure'],
        cities: [
          { slug: 'ankara', name: 'Ankara', plate: 6 },
          { slug: 'gaziantep', name: 'Gaziantep', plate: 27 },
          { slug: 'istanbul', name: 'İstanbul', plate: 34 },
        ],
      },
      pending_deliveries: 0,
    });
    expect(out.id).toMatch(/^whk_/);
    expect(out.secret).toMatch(/^whsec_/);
  });

  test.each([
    [['--key', 'key_nope', '--url', 'https://example.com/h'], "trafik: unknown key 'key_nope'"],
    [['--key', '$FREE', '--url', 'https://example.com/h'], 'is on the free plan; webhooks need an Enterprise key'],
    [['--key', '$REVOKED', '--url', 'https://example.com/h'], 'is revoked'],
    [['--key', '$KEY', '--url', 'https://example.com/h', '--cities', 'istanbul,Istambul'], "trafik: unknown city 'Istambul'"],
    [['--key', '$KEY', '--url', 'https://example.com/h', '--types', 'jam,crash'], "trafik: unknown event type 'crash'"],
    [['--key', '$KEY', '--url', 'ftp://example.com/h'], 'only http and https URLs are allowed'],
    [['--key', '$KEY', '--url', 'http://localhost:8080/h'], 'refused URL: localhost resolves to'],
    [['--key', '$KEY', '--url', 'http://10.1.2.3/h'], 'refused URL: 10.1.2.3 is not a public address: private (10.0.0.0/8)'],
    [['--key', '$KEY', '--url', 'http://[::1]/h'], 'refused URL: ::1 is not a public address: loopback'],
    [['--key', '$KEY', '--url', 'http://169.254.169.254/latest'], 'link-local'],
    [['--key', '$KEY'], 'webhooks add needs --url URL'],
    [['--key', '$KEY', '--url', 'https://example.com/h', '--colour', 'red'], 'unknown option --colour'],
  ])('add refuses bad input with one line: %j', async (args, message) => {
    const real = args.map((a) => (a === '$FREE' ? freeKey : a === '$REVOKED' ? revokedKey : a === '$KEY' ? s.keyId : a));
    const r = await cli(['add', ...real]);
    expect(r.code).not.toBe(0);
    expect(r.stdout).toBe('');
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toContain(message);
  });

  test('list shows subscriptions without secrets; --json too; --key filters', async () => {
    const text = await cli(['list']);
    expect(text.code).toBe(0);
    expect(text.stdout).toContain(id);
    expect(text.stdout).toContain('types=jam,road_closure');
    expect(text.stdout).not.toContain('whsec_');
    const json = await cli(['list', '--key', s.keyId, '--json']);
    const views = JSON.parse(json.stdout) as { id: string; key_id: string }[];
    expect(views.map((v) => v.id)).toContain(id);
    expect(views.every((v) => v.key_id === s.keyId)).toBe(true);
    expect(json.stdout).not.toContain('whsec_');
    expect(JSON.parse((await cli(['list', '--key', freeKey, '--json'])).stdout)).toEqual([]);
    expect((await cli(['list', '--key', 'key_nope'])).code).not.toBe(0);
  });

  test('test sends one signed webhook.test message and prints status and latency', async () => {
    const r = await cli(['test', id], allow);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^status: 204\nlatency_ms: \d+(\.\d)?\n$/);
    const m = rx.received.at(-1)!;
    expect(m.id).toMatch(new RegExp(`^msg_${id}_test_`));
    const payload = new Webhook(secret).verify(m.body, { 'webhook-id': m.id, 'webhook-timestamp': m.timestamp, 'webhook-signature': m.signature }) as {
      type: string;
      data: { endpoint_id: string; sent_at: string };
    };
    expect(payload.type).toBe('webhook.test');
    expect(payload.data.endpoint_id).toBe(id);
    expect(payload.data.sent_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
  });

  test('test --json; a failing receiver exits non-zero; the SSRF guard applies', async () => {
    const r = await cli(['test', id, '--json'], allow);
    expect(JSON.parse(r.stdout)).toMatchObject({ id, ok: true, status: 204, error: null });
    const add = await cli(['add', '--key', s.keyId, '--url', failing.url, '--json'], allow);
    const bad = JSON.parse(add.stdout).id as string;
    const f = await cli(['test', bad], allow);
    expect(f.code).toBe(1);
    expect(f.stdout).toContain('status: 500');
    expect(f.stdout).toContain('error: HTTP 500');
    // Without WEBHOOK_ALLOW_PRIVATE a loopback target is refused at send time too.
    const refused = await cli(['test', id, '--json']);
    expect(refused.code).toBe(1);
    expect(JSON.parse(refused.stdout)).toMatchObject({ ok: false, status: null });
    expect(JSON.parse(refused.stdout).error).toContain('refused: 127.0.0.1 is not a public address');
  });

  test('remove deletes it; unknown ids and subcommands are refused', async () => {
    const r = await cli(['remove', id, '--json']);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({ id, removed: true });
    expect((await cli(['list'])).stdout).not.toContain(id);
    const again = await cli(['remove', id]);
    expect(again.code).not.toBe(0);
    expect(again.stderr).toBe(`trafik: unknown webhook '${id}'\n`);
    expect((await cli(['test', id])).stderr).toBe(`trafik: unknown webhook '${id}'\n`);
    const none = await cli([]);
    expect(none.code).toBe(2);
    expect(none.stderr.split('\n')).toHaveLength(2);
    expect((await cli(['frobnicate'])).stderr).toContain("unknown webhooks subcommand 'frobnicate'");
    expect((await cli(['remove'])).stderr).toContain('needs a webhook id');
  });
});

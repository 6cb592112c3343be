import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { brotliDecompressSync } from 'node:zlib';
import { testApp, type TestApp } from '../helpers/app.ts';
import { insertEvents, insertScan } from '../helpers/factories.ts';
import { expectProblem, listen, variedRows } from '../helpers/http.ts';

// Over a real socket (Bun.serve through app.listen on port 0), where Bun itself could change
// what app.handle returns: HEAD bodies, OPTIONS, 405, CORS, request ids and compression.

let t: TestApp;
let base: string;
let stop: () => Promise<void>;

beforeAll(async () => {
  t = await testApp();
  insertEvents(t.db.db, variedRows(t.clock.now, 60));
  insertScan(t.db.db, t.clock.now - 10_000);
  t.readModel.refresh();
  ({ base, stop } = listen(t));
});
afterAll(async () => {
  await stop();
  t.cleanup();
});

/** fetch without Bun's automatic decompression, so Content-Encoding and the raw bytes show. */
function get(path: string, init: RequestInit & { decompress?: boolean } = {}): Promise<Response> {
  return fetch(`${base}${path}`, { decompress: false, ...init } as RequestInit);
}

const ROUTES = ['/api/v1/events', '/api/v1/events/istanbul?limit=5', '/api/v1/stats', '/api/v1/health', '/swagger/json', '/'];
const ALLOW = 'GET, HEAD, OPTIONS';

describe('HEAD', () => {
  for (const path of ROUTES) {
    test(`HEAD ${path}: the GET headers, no body`, async () => {
      const g = await get(path, { headers: { 'accept-encoding': 'identity' } });
      const h = await get(path, { method: 'HEAD', headers: { 'accept-encoding': 'identity' } });
      expect(h.status).toBe(g.status);
      expect(await h.text()).toBe('');
      await g.arrayBuffer();
      for (const name of ['content-type', 'cache-control', 'etag', 'last-modified', 'access-control-allow-origin', 'vary']) {
        expect({ name, value: h.headers.get(name) }).toEqual({ name, value: g.headers.get(name) });
      }
      expect(h.headers.get('x-request-id')).toBeString();
    });
  }

  test('HEAD with If-None-Match → 304', async () => {
    const etag = (await get('/api/v1/stats', { method: 'HEAD' })).headers.get('etag')!;
    const r = await get('/api/v1/stats', { method: 'HEAD', headers: { 'if-none-match': etag } });
    expect(r.status).toBe(304);
    expect(r.headers.get('etag')).toBe(etag);
  });

  test('HEAD of an error: its status and headers, no body', async () => {
    const r = await get('/api/v1/events/istambul', { method: 'HEAD' });
    expect(r.status).toBe(404);
    expect(r.headers.get('content-type')).toStartWith('application/problem+json');
    expect(r.headers.get('cache-control')).toBe('no-store');
    expect(await r.text()).toBe('');
  });
});

describe('OPTIONS', () => {
  for (const path of [...ROUTES, '/nope', '/api/v1/events/istambul']) {
    test(`OPTIONS ${path} → 204 with Allow`, async () => {
      const r = await get(path, { method: 'OPTIONS' });
      expect(r.status).toBe(204);
      expect(r.headers.get('allow')).toBe(ALLOW);
      expect(r.headers.get('access-control-allow-origin')).toBe('*');
      expect(r.headers.get('x-request-id')).toBeString();
      expect(await r.text()).toBe('');
    });
  }

  test('a CORS preflight gets the preflight headers', async () => {
    const r = await get('/api/v1/events', {
      method: 'OPTIONS',
      headers: { origin: 'https://app.example.com', 'access-control-request-method': 'GET', 'access-control-request-headers': 'authorization, x-api-key, if-none-match' },
    });
    expect(r.status).toBe(204);
    expect(r.headers.get('access-control-allow-origin')).toBe('*');
    const methods = r.headers.get('access-control-allow-methods')!.split(/,\s*/);
    expect(methods).toEqual(expect.arrayContaining(['GET', 'HEAD']));
    const allowed = r.headers.get('access-control-allow-headers')!.toLowerCase().split(/,\s*/);
    expect(allowed).toEqual(expect.arrayContaining(['authorization', 'x-api-key', 'if-none-match', 'x-request-id']));
    expect(Number(r.headers.get('access-control-max-age'))).toBeGreaterThan(0);
  });

  test('a plain OPTIONS has no preflight headers', async () => {
    const r = await get('/api/v1/events', { method: 'OPTIONS' });
    expect(r.headers.get('access-control-allow-methods')).toBeNull();
  });
});

describe('405', () => {
  for (const method of ['POST', 'PUT', 'PATCH', 'DELETE', 'TRACE', 'PROPFIND']) {
    for (const path of ['/api/v1/events', '/api/v1/stats', '/nope']) {
      test(`${method} ${path}`, async () => {
        const r = await get(path, { method, body: method === 'POST' || method === 'PUT' || method === 'PATCH' ? '{}' : undefined });
        expect(r.headers.get('allow')).toBe(ALLOW);
        if (method === 'TRACE') {
          // Bun's fetch drops the body of a TRACE response (curl shows it is sent): headers only.
          expect(r.status).toBe(405);
          expect(r.headers.get('content-type')).toStartWith('application/problem+json');
          return;
        }
        await expectProblem(r, 405, 'method_not_allowed', path);
      });
    }
  }
});

describe('CORS', () => {
  test('Access-Control-Allow-Origin: * on every kind of response', async () => {
    for (const [path, method] of [
      ['/api/v1/events', 'GET'],
      ['/api/v1/stats', 'GET'],
      ['/api/v1/health', 'GET'],
      ['/api/v1/events/istambul', 'GET'],
      ['/api/v1/events?limit=0', 'GET'],
      ['/nope', 'GET'],
      ['/api/v1/events', 'POST'],
      ['/swagger', 'GET'],
    ] as const) {
      const r = await get(path, { method, headers: { origin: 'https://x.example' } });
      expect({ path, method, acao: r.headers.get('access-control-allow-origin') }).toEqual({ path, method, acao: '*' });
      await r.arrayBuffer();
    }
  });

  test('with Origin, the request-id, rate-limit, quota and validator headers are exposed', async () => {
    const r = await get('/api/v1/events', { headers: { origin: 'https://x.example' } });
    const exposed = r.headers.get('access-control-expose-headers')!.toLowerCase().split(/,\s*/);
    expect(exposed).toEqual(
      expect.arrayContaining(['x-request-id', 'x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset', 'ratelimit', 'ratelimit-policy', 'retry-after', 'x-quota-limit', 'x-quota-remaining', 'x-quota-reset', 'etag']),
    );
    const err = await get('/nope', { headers: { origin: 'https://x.example' } });
    expect(err.headers.get('access-control-expose-headers')).toBe(r.headers.get('access-control-expose-headers'));
  });

  test('no credentials are allowed (keys travel in headers)', async () => {
    const r = await get('/api/v1/events', { headers: { origin: 'https://x.example' } });
    expect(r.headers.get('access-control-allow-credentials')).toBeNull();
  });
});

describe('X-Request-Id', () => {
  test('a sane id is echoed, on success and on errors', async () => {
    for (const path of ['/api/v1/events', '/nope', '/api/v1/events?limit=0']) {
      const r = await get(path, { headers: { 'x-request-id': 'abc-123_DEF.456' } });
      expect(r.headers.get('x-request-id')).toBe('abc-123_DEF.456');
      await r.arrayBuffer();
    }
    const o = await get('/api/v1/events', { method: 'OPTIONS', headers: { 'x-request-id': 'opt-1' } });
    expect(o.headers.get('x-request-id')).toBe('opt-1');
    const m = await get('/api/v1/events', { method: 'DELETE', headers: { 'x-request-id': 'del-1' } });
    expect(m.headers.get('x-request-id')).toBe('del-1');
    expect((await m.json()).request_id).toBe('del-1');
  });

  for (const [why, insane] of [
    ['300 characters', 'a'.repeat(300)],
    ['spaces', 'hello world'],
    ['angle brackets', '<script>'],
    ['quotes', 'a"b'],
    ['non-ASCII', encodeURIComponent('ş')],
  ] as const) {
    test(`an insane id (${why}) is replaced`, async () => {
      const r = await get('/nope', { headers: { 'x-request-id': insane } });
      const rid = r.headers.get('x-request-id')!;
      expect(rid).not.toBe(insane);
      expect(rid).toMatch(/^[A-Za-z0-9._:@-]{8,128}$/);
      expect((await r.json()).request_id).toBe(rid);
    });
  }

  test('without one, a fresh id is made per request', async () => {
    const a = (await get('/api/v1/stats')).headers.get('x-request-id');
    const b = (await get('/api/v1/stats')).headers.get('x-request-id');
    expect(a).toMatch(/^[A-Za-z0-9._:@-]{8,128}$/);
    expect(a).not.toBe(b);
  });
});

describe('compression', () => {
  // Every large response of the service; each must be compressed when the client accepts it.
  const LARGE = ['/api/v1/events?limit=50', '/api/v1/events?format=geojson&limit=50', '/api/v1/stats?top=81', '/swagger/json', '/swagger', '/swagger/assets/swagger-ui.css'];

  async function identity(path: string): Promise<Uint8Array<ArrayBuffer>> {
    const r = await get(path, { headers: { 'accept-encoding': 'identity' } });
    expect(r.status).toBe(200);
    expect(r.headers.get('content-encoding')).toBeNull();
    return new Uint8Array(await r.arrayBuffer());
  }

  for (const path of LARGE) {
    test(`${path}: gzip and br decode to the identity body`, async () => {
      const plain = await identity(path);
      expect(plain.byteLength).toBeGreaterThan(1024);
      const gz = await get(path, { headers: { 'accept-encoding': 'gzip' } });
      expect(gz.headers.get('content-encoding')).toBe('gzip');
      expect(gz.headers.get('vary')?.toLowerCase()).toContain('accept-encoding');
      const gzBytes = new Uint8Array(await gz.arrayBuffer());
      expect(gzBytes.byteLength).toBeLessThan(plain.byteLength);
      expect(new Uint8Array(Bun.gunzipSync(gzBytes))).toEqual(plain);

      const br = await get(path, { headers: { 'accept-encoding': 'gzip, deflate, br' } });
      expect(br.headers.get('content-encoding')).toBe('br');
      const brBytes = new Uint8Array(await br.arrayBuffer());
      expect(new Uint8Array(brotliDecompressSync(brBytes))).toEqual(plain);
    });
  }

  test('q=0 refuses a coding', async () => {
    const r = await get('/api/v1/events?limit=50', { headers: { 'accept-encoding': 'br;q=0, gzip' } });
    expect(r.headers.get('content-encoding')).toBe('gzip');
    await r.arrayBuffer();
    const n = await get('/api/v1/events?limit=50', { headers: { 'accept-encoding': 'br;q=0, gzip;q=0' } });
    expect(n.headers.get('content-encoding')).toBeNull();
    await n.arrayBuffer();
  });

  test('none when not accepted', async () => {
    for (const path of LARGE) {
      const r = await get(path, { headers: { 'accept-encoding': 'identity' } });
      expect({ path, ce: r.headers.get('content-encoding') }).toEqual({ path, ce: null });
      await r.arrayBuffer();
    }
  });

  test('small bodies are sent as they are', async () => {
    const r = await get('/api/v1/events/hakkari', { headers: { 'accept-encoding': 'gzip, br' } });
    const body = await r.arrayBuffer();
    expect(body.byteLength).toBeLessThan(1024);
    expect(r.headers.get('content-encoding')).toBeNull();
  });

  test("Bun's fetch, decompressing itself, reads the same JSON", async () => {
    const a = await (await fetch(`${base}/api/v1/events?limit=50`)).json();
    const b = await (await get('/api/v1/events?limit=50', { headers: { 'accept-encoding': 'identity' } })).json();
    expect(a).toEqual(b);
  });
});

test('the problem type URL of a socket error is served by the same server', async () => {
  const r = await get('/api/v1/events/istambul');
  const body = await expectProblem(r, 404, 'unknown_city');
  expect(body.type).toBe(`${base}/problems/unknown-city`);
  const page = await get(new URL(body.type).pathname);
  expect(page.status).toBe(200);
  expect(page.headers.get('content-type')).toStartWith('text/html');
  expect(await page.text()).toContain('Unknown city');
});

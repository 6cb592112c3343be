import { afterAll, beforeEach, describe, expect, test } from 'bun:test';
import { fetchJson, parseRetryAfter, redact, type FetchJsonOptions } from '../../../src/scanner/sources/http.ts';
import { recordingSleep, refusedUrl, startFakeUpstream } from '../../helpers/fake-upstream.ts';

const up = startFakeUpstream();
afterAll(() => up.stop());
beforeEach(() => up.clearRequests());

const SECRET = 'sk_live_SECRET123';
function opts(extra: Partial<FetchJsonOptions> = {}): FetchJsonOptions {
  return { timeoutMs: 150, sleep: async () => {}, random: () => 0.5, ...extra };
}

describe('fetchJson', () => {
  test('parses a JSON answer and returns status and headers', async () => {
    up.route('/ok', { json: { a: 1 }, headers: { 'retry-after': '7', 'x-extra': 'y' } });
    const r = await fetchJson(up.url('/ok'), opts());
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect(r.body).toEqual({ a: 1 });
    expect(r.status).toBe(200);
    expect(r.headers.get('x-extra')).toBe('y');
    expect(r.requests).toBe(1);
  });

  test('accepts +json and text/json content types', async () => {
    up.route('/problem', { body: '{"x":1}', headers: { 'content-type': 'application/problem+json' } });
    up.route('/textjson', { body: '{"x":2}', headers: { 'content-type': 'text/json' } });
    for (const [p, x] of [['/problem', 1], ['/textjson', 2]] as const) {
      const r = await fetchJson(up.url(p), opts());
      expect(r.ok && r.body).toEqual({ x });
    }
  });

  test('JSON text served as text/plain is refused (Content-Type is checked before parsing)', async () => {
    up.route('/plain', { body: '{"x":3}', headers: { 'content-type': 'text/plain; charset=utf-8' } });
    const r = await fetchJson(up.url('/plain'), opts());
    expect(!r.ok && r.kind).toBe('parse');
  });

  test('500 is retried once, with a jittered sleep, then fails as http', async () => {
    up.route('/500', { status: 500, body: 'boom' });
    const s = recordingSleep();
    const r = await fetchJson(up.url('/500'), opts({ sleep: s.sleep, random: () => 0.25, retryBaseMs: 400 }));
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.kind).toBe('http');
    expect(r.status).toBe(500);
    expect(r.requests).toBe(2);
    expect(up.count('/500')).toBe(2);
    expect(s.calls).toEqual([500]);
    expect(r.error).toContain('HTTP 500');
  });

  test('a 500 followed by a 200 succeeds on the retry', async () => {
    up.route('/flaky', { status: 502 }, { json: { ok: 1 } });
    const r = await fetchJson(up.url('/flaky'), opts());
    expect(r.ok).toBe(true);
    expect(r.requests).toBe(2);
  });

  test('4xx is not retried', async () => {
    up.route('/400', { status: 400, json: { error: 'bad bbox' } });
    const r = await fetchJson(up.url('/400'), opts());
    expect(!r.ok && r.kind).toBe('http');
    expect(up.count('/400')).toBe(1);
  });

  test('a block status is reported as blocked, not retried, with Retry-After', async () => {
    up.route('/429', { status: 429, headers: { 'retry-after': '120' }, json: { error: 'slow down' } });
    const r = await fetchJson(up.url('/429'), opts({ blockStatuses: [429, 503] }));
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.kind).toBe('blocked');
    expect(r.retryAfterMs).toBe(120_000);
    expect(r.requests).toBe(1);
    expect(r.bodySnippet).toContain('slow down');
  });

  test('a timeout is reported as timeout after one retry', async () => {
    up.route('/slow', { delayMs: 400, json: {} });
    const t0 = performance.now();
    const r = await fetchJson(up.url('/slow'), opts({ timeoutMs: 80 }));
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.kind).toBe('timeout');
    expect(r.requests).toBe(2);
    expect(r.error).toContain('80 ms');
    expect(performance.now() - t0).toBeLessThan(350);
  });

  test('an outer abort stops at once and is not retried', async () => {
    up.route('/slow2', { delayMs: 400, json: {} });
    const ac = new AbortController();
    setTimeout(() => ac.abort(), 30);
    const r = await fetchJson(up.url('/slow2'), opts({ timeoutMs: 1000, signal: ac.signal }));
    expect(!r.ok && r.kind).toBe('timeout');
    expect(!r.ok && r.error).toContain('aborted');
    expect(r.requests).toBe(1);
  });

  test('truncated JSON is a parse failure, not retried', async () => {
    up.route('/trunc', { file: 'synthetic-tomtom-v5-ankara.json', truncate: 700 });
    const r = await fetchJson(up.url('/trunc'), opts());
    expect(!r.ok && r.kind).toBe('parse');
    expect(!r.ok && r.error).toContain('malformed or truncated JSON');
    expect(up.count('/trunc')).toBe(1);
  });

  test('an HTML answer is parse by default and blocked when the caller says so', async () => {
    up.route('/wall', { html: '<!DOCTYPE html><html><body>captcha</body></html>' });
    const a = await fetchJson(up.url('/wall'), opts());
    expect(!a.ok && a.kind).toBe('parse');
    const b = await fetchJson(up.url('/wall'), opts({ htmlKind: 'blocked' }));
    expect(!b.ok && b.kind).toBe('blocked');
    expect(!b.ok && b.error).toContain('HTML');
  });

  test('HTML served as application/json is still caught', async () => {
    up.route('/liar', { body: '<html>nope</html>', headers: { 'content-type': 'application/json' } });
    const r = await fetchJson(up.url('/liar'), opts({ htmlKind: 'blocked' }));
    expect(!r.ok && r.kind).toBe('blocked');
  });

  test('a non-JSON content type is a parse failure', async () => {
    up.route('/csv', { body: 'a,b\n1,2', headers: { 'content-type': 'text/csv' } });
    const r = await fetchJson(up.url('/csv'), opts());
    expect(!r.ok && r.kind).toBe('parse');
    expect(!r.ok && r.error).toContain('text/csv');
  });

  test('connection refused is a network failure, retried once', async () => {
    const url = await refusedUrl('/georss');
    const r = await fetchJson(url, opts());
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.kind).toBe('network');
    expect(r.requests).toBe(2);
    expect(r.status).toBeNull();
  });

  test('API keys never appear in error strings', async () => {
    up.route('/echo', (req) => ({ status: 500, body: `bad request ${req.url.href} key ${SECRET}` }));
    up.route('/trunc2', { body: '{"a":', headers: { 'content-type': 'application/json' } });
    const refused = await refusedUrl('/x');
    const results = [
      await fetchJson(`${up.url('/echo')}?key=${SECRET}&bbox=1,2,3,4`, opts({ secrets: [SECRET] })),
      await fetchJson(`${up.url('/echo')}?in=bbox:1,2,3,4&apiKey=${SECRET}`, opts({ secrets: [SECRET] })),
      await fetchJson(`${up.url('/trunc2')}?apiKey=${SECRET}`, opts()),
      await fetchJson(`${refused}?key=${SECRET}`, opts()),
    ];
    for (const r of results) {
      expect(r.ok).toBe(false);
      if (r.ok) continue;
      expect(r.error).not.toContain(SECRET);
      expect(r.bodySnippet ?? '').not.toContain(SECRET);
      expect(JSON.stringify(r)).not.toContain(SECRET);
    }
    const first = results[0];
    expect(first && !first.ok && first.error).toContain('key=REDACTED');
  });

  test('a secret cut in two by the snippet limit does not leak its head', async () => {
    up.route('/long', { status: 500, body: `${' '.repeat(3990)}${SECRET} and more ${'x'.repeat(5000)}` });
    const r = await fetchJson(up.url('/long'), opts({ secrets: [SECRET], retries: 0 }));
    expect(r.ok).toBe(false);
    expect(JSON.stringify(r)).not.toContain(SECRET.slice(0, 6));
  });
});

describe('redact', () => {
  test('scrubs key-like query parameters and literal secrets', () => {
    expect(redact('https://x/y?key=abc&bbox=1,2')).toBe('https://x/y?key=REDACTED&bbox=1,2');
    expect(redact('GET https://x/y?in=bbox:1&apiKey=abc123 failed')).toBe('GET https://x/y?in=bbox:1&apiKey=REDACTED failed');
    expect(redact('token abcdef leaked', ['abcdef'])).toBe('token REDACTED leaked');
    expect(redact('monkey=1&turnkey=2')).toBe('monkey=1&turnkey=2');
  });
});

describe('parseRetryAfter', () => {
  test('reads delta-seconds and HTTP dates', () => {
    const now = Date.UTC(2026, 0, 1, 0, 0, 0);
    expect(parseRetryAfter('30', now)).toBe(30_000);
    expect(parseRetryAfter(new Date(now + 90_000).toUTCString(), now)).toBe(90_000);
    expect(parseRetryAfter('soon', now)).toBeNull();
    expect(parseRetryAfter(null, now)).toBeNull();
  });
});

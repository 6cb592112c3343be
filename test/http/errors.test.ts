import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { testApp, type TestApp } from '../helpers/app.ts';
import { eventRow, insertEvents, insertScan } from '../helpers/factories.ts';
import { expectInvalidParam, expectProblem } from '../helpers/http.ts';

// CONTRACT §3 through app.handle: every error case reachable in the Foundation, each body checked
// field by field by expectProblem (problem+json, no-store, request_id = X-Request-Id, type URL).

let t: TestApp;
beforeAll(async () => {
  t = await testApp();
  insertEvents(t.db.db, [eventRow({}, t.clock.now), eventRow({ plate: 6, type: 'jam' }, t.clock.now)]);
  insertScan(t.db.db, t.clock.now - 10_000);
  t.readModel.refresh();
});
afterAll(() => t.cleanup());

describe('unknown city', () => {
  test('in the path: 404 unknown_city with suggestions, istanbul first for istambul', async () => {
    const body = await expectProblem(await t.request('/api/v1/events/istambul'), 404, 'unknown_city', '/api/v1/events/istambul');
    expect(body.suggestions).toBeArray();
    expect(body.suggestions![0]).toEqual({ slug: 'istanbul', name: 'İstanbul', url: '/api/v1/events/istanbul' });
    expect(body.detail).toContain('istambul');
  });

  test('suggestion urls are working paths', async () => {
    const body = await expectProblem(await t.request('/api/v1/events/ankra'), 404, 'unknown_city');
    expect(body.suggestions!.length).toBeGreaterThan(0);
    expect(body.suggestions![0]!.slug).toBe('ankara');
    for (const s of body.suggestions!) expect((await t.request(s.url)).status).toBe(200);
  });

  test('a name with nothing close still gets an (empty) suggestions list', async () => {
    const body = await expectProblem(await t.request('/api/v1/events/Constantinople'), 404, 'unknown_city');
    expect(body.suggestions).toBeArray();
  });

  test('in the city parameter: 400 unknown_city with suggestions', async () => {
    const body = await expectProblem(await t.request('/api/v1/events?city=istambul'), 400, 'unknown_city', '/api/v1/events');
    expect(body.suggestions![0]!.slug).toBe('istanbul');
  });

  test('the city parameter is not a parameter of the per-city route', async () => {
    await expectProblem(await t.request('/api/v1/events/istanbul?city=ankara'), 400, 'unknown_parameter');
  });
});

describe('bad values: 400 invalid_parameter naming the parameter', () => {
  const cases: [string, string][] = [
    ['/api/v1/events?limit=0', 'limit'],
    ['/api/v1/events?limit=abc', 'limit'],
    ['/api/v1/events?cursor=zzz', 'cursor'],
    ['/api/v1/events?bbox=1,2,3', 'bbox'],
    ['/api/v1/events?updated_since=yesterday', 'updated_since'],
    ['/api/v1/events/ankara?type=crash', 'type'],
    ['/api/v1/stats?top=0', 'top'],
  ];
  for (const [path, name] of cases) {
    test(path, async () => {
      await expectInvalidParam(await t.request(path), name);
    });
  }

  test('several bad values are all listed', async () => {
    const body = await expectProblem(await t.request('/api/v1/events?limit=0&type=crash&severity=huge'), 400, 'invalid_parameter');
    expect(body.invalid_params!.map((p) => p.name).sort()).toEqual(['limit', 'severity', 'type']);
  });
});

describe('unknown and repeated parameters', () => {
  test('unknown parameter: 400 unknown_parameter naming it', async () => {
    const body = await expectProblem(await t.request('/api/v1/events?citty=ankara'), 400, 'unknown_parameter', '/api/v1/events');
    expect(body.detail).toContain('citty');
    expect(body.invalid_params?.map((p) => p.name)).toEqual(['citty']);
  });

  test('unknown parameter on stats and health too', async () => {
    await expectProblem(await t.request('/api/v1/stats?limit=5'), 400, 'unknown_parameter');
    await expectProblem(await t.request('/api/v1/health?verbose=1'), 400, 'unknown_parameter');
  });

  test('API keys in the query string are not accepted as a parameter', async () => {
    const res = await t.request('/api/v1/events?api_key=trk_live_abc');
    expect(res.status).toBe(400);
    expect((await res.json()).code).toMatch(/^(unknown_parameter|invalid_parameter)$/);
  });

  test('repeated parameter: 400 naming it', async () => {
    const body = await expectProblem(await t.request('/api/v1/events?limit=1&limit=2'), 400, 'invalid_parameter');
    expect(body.invalid_params!.map((p) => p.name)).toEqual(['limit']);
    await expectInvalidParam(await t.request('/api/v1/events?type=jam&type=accident'), 'type');
    await expectInvalidParam(await t.request('/api/v1/stats?top=1&top=1'), 'top');
  });
});

describe('unknown routes', () => {
  for (const path of ['/nope', '/api/v1', '/api/v1/event', '/api/v2/events', '/api/v1/events/istanbul/extra', '/problems/no-such-problem', '/swagger/assets/evil.js']) {
    test(`GET ${path} → 404 not_found`, async () => {
      await expectProblem(await t.request(path), 404, 'not_found', path);
    });
  }
});

describe('405 for every method but GET, HEAD, OPTIONS — known and unknown paths', () => {
  for (const method of ['POST', 'PUT', 'PATCH', 'DELETE']) {
    for (const path of ['/api/v1/events', '/api/v1/events/istanbul', '/api/v1/stats', '/api/v1/health', '/nope', '/api/v1/events/istambul']) {
      test(`${method} ${path}`, async () => {
        const res = await t.request(path, { method, body: method === 'DELETE' ? null : '{"x":1}', headers: { 'content-type': 'application/json' } });
        expect(res.headers.get('allow')).toBe('GET, HEAD, OPTIONS');
        await expectProblem(res, 405, 'method_not_allowed', path);
      });
    }
  }
});

describe('the method is checked first', () => {
  test('POST with bad parameters is 405, not 400', async () => {
    const res = await t.request('/api/v1/events?limit=0&bogus=1', { method: 'POST' });
    expect(res.headers.get('allow')).toBe('GET, HEAD, OPTIONS');
    await expectProblem(res, 405, 'method_not_allowed');
  });
  test('DELETE on an unknown city is 405, not 404', async () => {
    await expectProblem(await t.request('/api/v1/events/istambul', { method: 'DELETE' }), 405, 'method_not_allowed');
  });
  test('OPTIONS with bad parameters is 204', async () => {
    const res = await t.request('/api/v1/events?limit=0&bogus=1', { method: 'OPTIONS' });
    expect(res.status).toBe(204);
    expect(res.headers.get('allow')).toBe('GET, HEAD, OPTIONS');
  });
  test('HEAD is checked like GET', async () => {
    const res = await t.request('/api/v1/events?bogus=1', { method: 'HEAD' });
    expect(res.status).toBe(400);
    expect(res.headers.get('content-type')).toStartWith('application/problem+json');
  });
});

describe('never 422', () => {
  const odd = [
    '/api/v1/events?limit=1e2',
    '/api/v1/events?limit=-1',
    '/api/v1/events?limit=99999999999999999999',
    '/api/v1/events?radius_km=abc&near=41,29',
    '/api/v1/events?format=',
    '/api/v1/events?near=a,b',
    '/api/v1/events/%',
    '/api/v1/events/%E0%A4%A',
    '/api/v1/stats?top=abc',
    '/api/v1/stats?top=',
    `/api/v1/events/${'x'.repeat(2000)}`,
    `/api/v1/events?city=${'x'.repeat(500)}`,
  ];
  for (const path of odd) {
    test(path.slice(0, 80), async () => {
      const res = await t.request(path);
      expect(res.status).toBeGreaterThanOrEqual(400);
      expect(res.status).toBeLessThan(500);
      await expectProblem(res, res.status, (await res.clone().json()).code);
    });
  }
});

describe('problem type URLs are served', () => {
  test('GET /problems/unknown-city → 200 HTML', async () => {
    const problem = await expectProblem(await t.request('/api/v1/events/istambul'), 404, 'unknown_city');
    const res = await t.request(new URL(problem.type).pathname);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toStartWith('text/html');
    const html = await res.text();
    expect(html).toContain('Unknown city');
    expect(html).toContain('unknown_city');
  });

  test('every code of the closed set has its page', async () => {
    for (const slug of ['unknown-city', 'invalid-parameter', 'unknown-parameter', 'invalid-api-key', 'plan-required', 'quota-exceeded', 'not-found', 'method-not-allowed', 'rate-limited', 'unavailable', 'internal-error']) {
      const res = await t.request(`/problems/${slug}`);
      expect({ slug, status: res.status }).toEqual({ slug, status: 200 });
      expect(res.headers.get('content-type')).toStartWith('text/html');
    }
  });

  test('the type URL is absolute under the request origin', async () => {
    const res = await t.app.handle(new Request('https://api.example.test/nope'));
    const body = await expectProblem(res, 404, 'not_found', '/nope');
    expect(body.type).toBe('https://api.example.test/problems/not-found');
  });
});

describe('request id on errors', () => {
  test('a sane X-Request-Id is echoed in the header and body', async () => {
    const res = await t.request('/api/v1/events?bogus=1', { headers: { 'x-request-id': 'client-42.a:b@c' } });
    expect(res.headers.get('x-request-id')).toBe('client-42.a:b@c');
    const body = await expectProblem(res, 400, 'unknown_parameter');
    expect(body.request_id).toBe('client-42.a:b@c');
  });

  test('ids of different requests differ', async () => {
    const a = await t.request('/nope');
    const b = await t.request('/nope');
    expect(a.headers.get('x-request-id')).not.toBe(b.headers.get('x-request-id'));
  });
});

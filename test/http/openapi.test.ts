import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { CityListQuery, ListQuery } from '../../src/modules/events/model.ts';
import { StatsQuery } from '../../src/modules/stats/model.ts';
import { StreamQuery } from '../../src/modules/stream/model.ts';
import { testApp, type TestApp } from '../helpers/app.ts';

// The OpenAPI document at /swagger/json and the offline Swagger UI at /swagger.

type Json = Record<string, any>;

let t: TestApp;
let doc: Json;

beforeAll(async () => {
  t = await testApp();
  const res = await t.request('/swagger/json');
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toStartWith('application/json');
  doc = (await res.json()) as Json;
});
afterAll(() => t.cleanup());

const ROUTES: { path: string; query: string[]; pathParams: string[]; problems: string[] }[] = [
  { path: '/api/v1/events', query: Object.keys(ListQuery.properties), pathParams: [], problems: ['400', '403', '405', '429'] },
  { path: '/api/v1/events/{city}', query: Object.keys(CityListQuery.properties), pathParams: ['city'], problems: ['400', '403', '404', '405', '429'] },
  { path: '/api/v1/stats', query: Object.keys(StatsQuery.properties), pathParams: [], problems: ['400', '405', '429'] },
  { path: '/api/v1/health', query: [], pathParams: [], problems: ['405', '429'] },
  { path: '/api/v1/events/stream', query: Object.keys(StreamQuery.properties), pathParams: [], problems: ['400', '403', '405', '429'] },
  { path: '/api/v1/webhooks', query: [], pathParams: [], problems: ['400', '403', '405', '429'] },
];

function resolve(ref: string): Json | undefined {
  expect(ref).toStartWith('#/');
  let node: any = doc;
  for (const part of ref.slice(2).split('/')) node = node?.[part.replaceAll('~1', '/').replaceAll('~0', '~')];
  return node as Json | undefined;
}

function schemaOf(response: Json, type: string): Json {
  const s = response.content?.[type]?.schema as Json | undefined;
  expect(s).toBeDefined();
  return s!.$ref ? resolve(s!.$ref)! : s!;
}

test('it is OpenAPI 3.1 with info version 1.0', () => {
  expect(doc.openapi).toMatch(/^3\.1\.\d+$/);
  expect(doc.info.version).toBe('1.0');
  expect(doc.info.title).toBeString();
});

test('exactly the API paths are documented, GET only', () => {
  expect(Object.keys(doc.paths).sort()).toEqual(ROUTES.map((r) => r.path).sort());
  for (const r of ROUTES) expect(Object.keys(doc.paths[r.path])).toEqual(['get']);
});

describe('each operation', () => {
  for (const r of ROUTES) {
    test(`${r.path}: parameters`, () => {
      const op = doc.paths[r.path].get;
      expect(op.operationId).toBeString();
      const params: Json[] = op.parameters ?? [];
      expect(params.filter((p) => p.in === 'query').map((p) => p.name).sort()).toEqual([...r.query].sort());
      expect(params.filter((p) => p.in === 'path').map((p) => p.name)).toEqual(r.pathParams);
      for (const p of params) {
        expect(p.schema).toBeObject();
        expect(typeof p.schema.type === 'string' || Array.isArray(p.schema.enum) || Array.isArray(p.schema.anyOf)).toBe(true);
        if (p.in === 'path') expect(p.required).toBe(true);
        else expect(p.required ?? false).toBe(false);
      }
      if (r.query.includes('limit')) {
        const limit = params.find((p) => p.name === 'limit')!;
        expect(limit.schema).toMatchObject({ type: 'integer', minimum: 1, maximum: 1000, default: 100 });
        const radius = params.find((p) => p.name === 'radius_km')!;
        expect(radius.schema).toMatchObject({ type: 'number', maximum: 200 });
        const format = params.find((p) => p.name === 'format')!;
        expect(format.schema.enum).toEqual(['json', 'geojson']);
      }
      if (r.query.includes('top')) {
        expect(params.find((p) => p.name === 'top')!.schema).toMatchObject({ type: 'integer', minimum: 1, maximum: 81 });
      }
    });

    test(`${r.path}: 200 and problem responses with schemas`, () => {
      const responses = doc.paths[r.path].get.responses as Json;
      expect(responses['200']).toBeDefined();
      if (r.path === '/api/v1/events/stream') {
        // Server-Sent Events: a text stream, documented with an example frame.
        expect(schemaOf(responses['200'], 'text/event-stream').type).toBe('string');
      } else {
        const ok = schemaOf(responses['200'], 'application/json');
        expect(ok.type).toBe('object');
        // The subscriptions list is an envelope of one member; its items carry the fields.
        const fields = r.path === '/api/v1/webhooks' ? ok.properties.data.items.properties : ok.properties;
        expect(Object.keys(fields).length).toBeGreaterThan(2);
      }
      for (const status of r.problems) {
        expect({ status, has: status in responses }).toEqual({ status, has: true });
        const problem = schemaOf(responses[status], 'application/problem+json');
        expect(problem.required).toEqual(expect.arrayContaining(['type', 'title', 'status', 'detail', 'instance', 'code', 'request_id']));
        expect(problem.properties.code.enum ?? problem.properties.code.anyOf).toBeDefined();
        expect(responses[status].description).toBeString();
      }
      // Never 422: the API maps validation to 400.
      expect(responses['422']).toBeUndefined();
    });
  }

  test('list pages: JSON and GeoJSON bodies, 304', () => {
    for (const path of ['/api/v1/events', '/api/v1/events/{city}']) {
      const responses = doc.paths[path].get.responses as Json;
      const list = schemaOf(responses['200'], 'application/json');
      expect(Object.keys(list.properties)).toEqual(['data', 'pagination', 'meta']);
      const event = list.properties.data.items.$ref ? resolve(list.properties.data.items.$ref)! : list.properties.data.items;
      for (const k of ['id', 'type', 'subtype', 'severity', 'status', 'city', 'district', 'location', 'geometry', 'road', 'description', 'jam', 'reported_at', 'first_seen_at', 'last_seen_at', 'updated_at', 'cleared_at', 'source', 'confidence']) {
        expect(event.properties).toHaveProperty(k);
      }
      const geo = schemaOf(responses['200'], 'application/geo+json');
      expect(geo.properties.type.const ?? geo.properties.type.enum?.[0]).toBe('FeatureCollection');
      expect(responses['304']).toBeDefined();
    }
  });

  test('stats: all four type keys required', () => {
    const stats = schemaOf(doc.paths['/api/v1/stats'].get.responses['200'], 'application/json');
    expect(stats.properties.by_type.required.sort()).toEqual(['accident', 'hazard', 'jam', 'road_closure']);
    expect(stats.properties.top_cities.type).toBe('array');
  });

  test('health: 503 documented with the health body', () => {
    const responses = doc.paths['/api/v1/health'].get.responses as Json;
    const h503 = schemaOf(responses['503'], 'application/json');
    expect(h503.properties.status.enum).toEqual(['pass', 'warn', 'fail']);
    expect(h503.properties.version).toBeDefined();
  });
});

test('every $ref in the document resolves', () => {
  const refs: string[] = [];
  const walk = (n: unknown): void => {
    if (Array.isArray(n)) n.forEach(walk);
    else if (n !== null && typeof n === 'object') {
      for (const [k, v] of Object.entries(n)) {
        if (k === '$ref' && typeof v === 'string') refs.push(v);
        else walk(v);
      }
    }
  };
  walk(doc);
  expect(refs.length).toBeGreaterThan(0);
  for (const ref of new Set(refs)) expect({ ref, found: resolve(ref) !== undefined }).toEqual({ ref, found: true });
});

describe('Swagger UI', () => {
  test('/swagger is HTML with no absolute http(s) URL, loading local assets', async () => {
    const res = await t.request('/swagger');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toStartWith('text/html');
    const html = await res.text();
    expect(html).not.toMatch(/https?:\/\//i);
    expect(html).not.toMatch(/["'(]\/\/[a-z0-9]/i); // no protocol-relative URLs either
    expect(html).toContain('/swagger/assets/swagger-ui-bundle.js');
    expect(html).toContain('/swagger/assets/swagger-ui.css');
    expect(html).toContain('/swagger/json');
  });

  test('every asset the page references is served, non-trivial', async () => {
    const html = await (await t.request('/swagger')).text();
    const assets = [...new Set(html.match(/\/swagger\/assets\/[A-Za-z0-9._-]+/g) ?? [])];
    expect(assets.length).toBeGreaterThanOrEqual(2);
    for (const a of assets) {
      const res = await t.request(a);
      expect({ a, status: res.status }).toEqual({ a, status: 200 });
      const size = (await res.arrayBuffer()).byteLength;
      expect(size).toBeGreaterThan(10_000);
      expect(res.headers.get('content-type')).toMatch(a.endsWith('.js') ? /javascript/ : /text\/css/);
    }
  });

  test('the UI bundle itself names no validator or CDN the page would call', async () => {
    const html = await (await t.request('/swagger')).text();
    expect(html).not.toContain('validator.swagger.io');
    expect(html).not.toContain('unpkg.com');
  });

  test('the root lists the API', async () => {
    const res = await t.request('/');
    expect(res.status).toBe(200);
    const body = await res.json();
    expect(body).toMatchObject({ api_version: '1.0', docs: '/swagger', openapi: '/swagger/json' });
  });
});

import { afterAll, beforeAll, expect, test } from 'bun:test';
import { testApp, type TestApp } from '../helpers/app.ts';
import { eventRow, insertEvents, insertScan } from '../helpers/factories.ts';

let t: TestApp;
beforeAll(async () => {
  t = await testApp();
  insertEvents(t.db.db, Array.from({ length: 40 }, () => eventRow({}, t.clock.now)));
  insertScan(t.db.db, t.clock.now - 5000);
  t.readModel.refresh();
});
afterAll(() => t.cleanup());

const get = (headers: Record<string, string>, path = '/api/v1/events') => t.request(path, { headers });

test('Accept q-values decide between JSON and GeoJSON', async () => {
  const type = async (accept: string) => (await get({ accept })).headers.get('content-type');
  expect(await type('application/geo+json')).toStartWith('application/geo+json');
  expect(await type('application/geo+json;q=0, application/json')).toStartWith('application/json');
  expect(await type('application/json;q=0.5, application/geo+json')).toStartWith('application/geo+json');
  expect(await type('application/json, application/geo+json;q=0.9')).toStartWith('application/json');
  expect(await type('*/*')).toStartWith('application/json');
});

test('Accept-Encoding q-values and * pick the coding; q=0 refuses it', async () => {
  const enc = async (ae: string) => (await get({ 'accept-encoding': ae })).headers.get('content-encoding');
  expect(await enc('gzip, br')).toBe('br');
  expect(await enc('br;q=0.1, gzip')).toBe('gzip');
  expect(await enc('br;q=0, gzip;q=0')).toBeNull();
  expect(await enc('*')).toBe('br');
  expect(await enc('gzip, *;q=0')).toBe('gzip');
  expect(await enc('identity')).toBeNull();
});

test('each coding has its own strong ETag, and If-None-Match is checked against the one sent', async () => {
  const plain = await get({});
  const gz = await get({ 'accept-encoding': 'gzip' });
  const br = await get({ 'accept-encoding': 'br' });
  const tags = [plain, gz, br].map((r) => r.headers.get('etag')!);
  expect(new Set(tags).size).toBe(3);
  for (const tag of tags) expect(tag).toMatch(/^"[^"]+"$/);
  expect((await get({ 'accept-encoding': 'gzip', 'if-none-match': tags[1]! })).status).toBe(304);
  expect((await get({ 'accept-encoding': 'gzip', 'if-none-match': tags[0]! })).status).toBe(200);
  const nm = await get({ 'accept-encoding': 'br', 'if-none-match': tags[2]! });
  expect(nm.status).toBe(304);
  expect(nm.headers.get('etag')).toBe(tags[2]!);
});

test('radius_km accepts a leading-dot decimal', async () => {
  expect((await get({}, '/api/v1/events?near=41.0,29.0&radius_km=.5')).status).toBe(200);
});

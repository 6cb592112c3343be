import { afterAll, beforeAll, expect, test } from 'bun:test';
import { insertEvents, eventRow, insertScan } from '../helpers/factories.ts';
import { testApp, type TestApp } from '../helpers/app.ts';

let t: TestApp;
beforeAll(async () => {
  t = await testApp();
  insertEvents(t.db.db, [eventRow({}, t.clock.now), eventRow({ plate: 6, type: 'jam' }, t.clock.now)]);
  insertScan(t.db.db, t.clock.now - 10_000);
  t.readModel.refresh();
});
afterAll(() => t.cleanup());

test('lists events', async () => {
  const r = await t.request('/api/v1/events?limit=1');
  const body = await r.json();
  expect(r.status).toBe(200);
  expect(body.data).toHaveLength(1);
  expect(body.pagination.total).toBe(2);
  expect(body.pagination.next_cursor).toBeString();
});

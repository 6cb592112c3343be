import { afterAll, beforeAll, expect, test } from 'bun:test';
import { testApp, type TestApp } from '../helpers/app.ts';

let t: TestApp;
beforeAll(async () => {
  t = await testApp();
});
afterAll(() => t.cleanup());

// Found by fuzzing: Elysia hands a handler `undefined` for a path parameter it cannot
// percent-decode. Every such path must be a 4xx problem, never a 500.
for (const path of ['/problems/to%', '/problems/%E0%A4%A', '/swagger/assets/%', '/swagger/assets/%E0%A4%A', '/api/v1/events/%E0%A4%A', '/api/v1/events/x%', '/api/v1/events/%%']) {
  test(`${path} is a 4xx problem`, async () => {
    const r = await t.request(path);
    expect(r.status).toBeGreaterThanOrEqual(400);
    expect(r.status).toBeLessThan(500);
    expect(r.headers.get('content-type')).toBe('application/problem+json');
    const body = await r.json();
    expect(body.status).toBe(r.status);
  });
}

import { expect, test } from 'bun:test';
import { UNREACHABLE_AFTER } from '../../../src/scanner/sources/core.ts';
import { createSources } from '../../../src/scanner/sources/index.ts';
import type { Cell } from '../../../src/scanner/sources/source.ts';

const cells: Cell[] = Array.from({ length: 40 }, (_, i) => ({ id: `c${i}`, bbox: [28 + i * 0.01, 40, 28.01 + i * 0.01, 40.01] }));

test('an upstream nobody answers for puts the source in back-off after a few cells, not 220 retries', async () => {
  // A port that was just free: connections are refused at once.
  const probe = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: () => new Response() });
  const port = probe.port;
  probe.stop(true);
  let now = Date.parse('2026-11-21T10:00:00Z');
  const [waze] = createSources({ sources: ['waze'], wazeUrl: `http://127.0.0.1:${port}/georss`, timeoutMs: 2000 }, { now: () => now, sleep: async () => {} });
  const results = [];
  for (const cell of cells) results.push(await waze!.fetchCell(cell));
  expect(results.every((r) => !r.ok)).toBe(true);
  const requests = results.reduce((n, r) => n + r.requests, 0);
  // Each of the first cells: one attempt and one retry; then no request at all.
  expect(requests).toBeLessThanOrEqual(UNREACHABLE_AFTER * 2);
  expect(results.slice(UNREACHABLE_AFTER).every((r) => !r.ok && r.kind === 'backoff')).toBe(true);
  const status = waze!.status();
  expect(status.state).toBe('backing_off');
  expect(status.reason).toContain('unreachable');
  // Once the back-off has passed, the source tries again.
  now = status.until! + 1;
  const again = await waze!.fetchCell(cells[0]!);
  expect(again.ok).toBe(false);
  expect(again.requests).toBeGreaterThan(0);
});

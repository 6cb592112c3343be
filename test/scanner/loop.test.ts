/**
 * The scan loop: croner schedules, `protect` prevents overlap, `catch` and the loop's own
 * try/catch keep a failing scan from taking the process down, stop() waits for the scan in flight.
 * Mostly on fake timers (STACK §4); one short real-time run drives the real runScan.
 */
import { afterEach, describe, expect, jest, test } from 'bun:test';
import type { Logger } from '../../src/log.ts';
import { startScanLoop, type ScanLoop } from '../../src/jobs/scan-loop.ts';
import { runScan } from '../../src/scanner/scan.ts';
import { ReplaySource } from '../../src/scanner/sources/replay.ts';
import { silentLogger } from '../../src/log.ts';
import { wazeAlert, wazeResponse } from '../../scripts/upstream-payloads.ts';
import { cells, deferred, PLACES, replayDir, scanHarness } from '../helpers/scan.ts';

const T0 = Date.UTC(2026, 10, 21, 7, 30);

function recordingLogger(): Logger & { errors: { msg: string; fields: Record<string, unknown> | undefined }[] } {
  const errors: { msg: string; fields: Record<string, unknown> | undefined }[] = [];
  return { ...silentLogger, errors, error: (msg, fields) => void errors.push({ msg, fields }) };
}

/** Lets pending promise callbacks run (fake timers do not advance microtasks by themselves). */
async function flush(): Promise<void> {
  for (let i = 0; i < 20; i++) await Promise.resolve();
}

/** Moves fake time forward a second at a time, letting the scans' promises settle in between. */
async function advance(ms: number): Promise<void> {
  for (let t = 0; t < ms; t += 1000) {
    jest.advanceTimersByTime(Math.min(1000, ms - t));
    await flush();
  }
}

let loop: ScanLoop | undefined;
afterEach(async () => {
  jest.useRealTimers();
  await loop?.stop();
  loop = undefined;
});

describe('startScanLoop on fake timers', () => {
  test('the first scan runs at start; the next one an interval later (not a second later), then every interval', async () => {
    jest.useFakeTimers({ now: T0 });
    const starts: number[] = [];
    loop = startScanLoop({ intervalSeconds: 90, logger: silentLogger, scan: async () => void starts.push(Date.now()) });
    expect(loop.isBusy()).toBe(true);
    await flush();
    expect(starts).toEqual([T0]);
    await advance(60_000);
    expect(starts).toHaveLength(1);
    await advance(31_000);
    expect(starts).toHaveLength(2);
    expect(starts[1]! - T0).toBeGreaterThanOrEqual(90_000);
    expect(starts[1]! - T0).toBeLessThanOrEqual(91_000);
    await advance(90_000);
    expect(starts).toHaveLength(3);
    expect(starts[2]! - starts[1]!).toBe(90_000);
    expect(loop.nextRunAt()).toBe(starts[2]! + 90_000);
  });

  test('runAtStart: false leaves the first scan to the schedule', async () => {
    jest.useFakeTimers({ now: T0 });
    let n = 0;
    loop = startScanLoop({ intervalSeconds: 5, logger: silentLogger, runAtStart: false, scan: async () => void n++ });
    expect(n).toBe(0);
    await advance(1000);
    expect(n).toBe(1);
  });

  test('scans never overlap: a scan longer than many intervals holds the triggers; runNow joins it', async () => {
    jest.useFakeTimers({ now: T0 });
    const inFlight = [deferred(), deferred()];
    let calls = 0;
    let active = 0;
    let maxActive = 0;
    loop = startScanLoop({
      intervalSeconds: 2,
      logger: silentLogger,
      scan: async () => {
        const d = inFlight[calls++] ?? deferred();
        active++;
        maxActive = Math.max(maxActive, active);
        try {
          await d.promise;
        } finally {
          active--;
        }
      },
    });
    await advance(11_000);
    expect(calls).toBe(1);
    expect(loop.isBusy()).toBe(true);
    const joined = loop.runNow();
    await flush();
    expect(calls).toBe(1);
    inFlight[0]!.resolve();
    await joined;
    expect(loop.isBusy()).toBe(false);
    await advance(3000);
    expect(calls).toBe(2);
    inFlight[1]!.resolve();
    await flush();
    expect(maxActive).toBe(1);
  });

  test('a throwing scan (async or sync) is logged; the loop and the process carry on', async () => {
    jest.useFakeTimers({ now: T0 });
    const logger = recordingLogger();
    let calls = 0;
    loop = startScanLoop({
      intervalSeconds: 3,
      logger,
      scan: () => {
        calls++;
        if (calls === 1) return Promise.reject(new Error('database is locked'));
        if (calls === 2) throw new TypeError('sync bug');
        return Promise.resolve();
      },
    });
    await flush();
    expect(logger.errors).toEqual([{ msg: 'scan failed', fields: { error: 'Error: database is locked' } }]);
    await advance(3000);
    expect(calls).toBe(2);
    expect(logger.errors[1]).toEqual({ msg: 'scan failed', fields: { error: 'TypeError: sync bug' } });
    // A synchronous throw used to leave the loop busy forever, every later trigger joining it.
    expect(loop.isBusy()).toBe(false);
    await advance(3000);
    expect(calls).toBe(3);
    expect(logger.errors).toHaveLength(2);
    expect(loop.isBusy()).toBe(false);
  });

  test('stop() waits for the scan in flight, and nothing starts after it', async () => {
    jest.useFakeTimers({ now: T0 });
    const d = deferred();
    let calls = 0;
    let finished = false;
    loop = startScanLoop({
      intervalSeconds: 2,
      logger: silentLogger,
      scan: async () => {
        calls++;
        if (calls === 1) {
          await d.promise;
          finished = true;
        }
      },
    });
    let stopped = false;
    const stopping = loop.stop().then(() => {
      stopped = true;
    });
    await advance(5000);
    expect(stopped).toBe(false);
    d.resolve();
    await stopping;
    expect(finished).toBe(true);
    await advance(20_000);
    expect(calls).toBe(1);
    expect(loop.nextRunAt()).toBeNull();
  });
});

describe('startScanLoop with real timers and the real runScan', () => {
  test('a 1 s interval: scans follow each other without overlap; stop() waits for the one in flight', async () => {
    const h = scanHarness();
    const rd = replayDir();
    try {
      rd.write('waze', 'a.json', wazeResponse(Array.from({ length: 40 }, (_, i) => wazeAlert({ uuid: `loop-${i}`, type: 'ACCIDENT', subtype: 'ACCIDENT_MINOR', lat: PLACES.kizilay.lat + i * 1e-4, lon: PLACES.kizilay.lon, pubMillis: T0, reliability: 8 })), [], T0));
      const replay = new ReplaySource({ dir: rd.dir });
      let started = 0;
      let done = 0;
      let active = 0;
      let maxActive = 0;
      loop = startScanLoop({
        intervalSeconds: 1,
        logger: silentLogger,
        scan: async () => {
          started++;
          active++;
          maxActive = Math.max(maxActive, active);
          try {
            // ~300 ms per scan: 40 writes in chunks of 4, 30 ms per pause.
            await runScan({ writer: h.writer.sqlite, sources: [replay], cells: cells('ank'), clock: Date.now, logger: silentLogger, chunkSize: 4, pause: () => Bun.sleep(30) });
          } finally {
            active--;
            done++;
          }
        },
      });
      const deadline = Date.now() + 4000;
      while (!(done >= 1 && loop.isBusy()) && Date.now() < deadline) await Bun.sleep(10);
      expect(loop.isBusy()).toBe(true); // the second scan is in flight
      await loop.stop();
      expect(done).toBe(started);
      expect(maxActive).toBe(1);
      const runs = h.runs();
      expect(runs.length).toBe(started);
      expect(runs.length).toBeGreaterThanOrEqual(2);
      expect(runs.every((r) => r.status === 'ok' && r.finishedAt !== null)).toBe(true);
      for (let i = 1; i < runs.length; i++) expect(runs[i]!.startedAt).toBeGreaterThanOrEqual(runs[i - 1]!.finishedAt!);
      expect(runs[0]!.created).toBe(40);
    } finally {
      rd.cleanup();
      h.cleanup();
    }
  });
});

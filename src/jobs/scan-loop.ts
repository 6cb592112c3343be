import { Cron } from 'croner';
import { errorText, type Logger } from '../log.ts';

export interface ScanLoop {
  /** Runs one scan now unless one is in flight (then waits for that one). */
  runNow(): Promise<void>;
  nextRunAt(): number | null;
  isBusy(): boolean;
  /** Stops triggering and waits for the scan in flight, if any. */
  stop(): Promise<void>;
}

/**
 * croner only schedules: `protect` so scans never overlap, `catch` so a failing scan never takes
 * the process down (without it Bun exits on the rejection, STACK.md §4), and the promise of the
 * run in flight is kept so a graceful stop can wait for it.
 */
export function startScanLoop(opts: { intervalSeconds: number; scan: () => Promise<unknown>; logger: Logger; runAtStart?: boolean }): ScanLoop {
  let inflight: Promise<void> | null = null;
  const runOnce = (): Promise<void> => {
    if (inflight !== null) return inflight;
    inflight = (async () => {
      // Start the scan a microtask later: a scan that throws synchronously would otherwise run the
      // finally below before `inflight` is assigned, leaving the loop busy (and stuck) for good.
      await null;
      try {
        await opts.scan();
      } catch (err) {
        opts.logger.error('scan failed', { error: errorText(err) });
      } finally {
        inflight = null;
      }
    })();
    return inflight;
  };
  const runAtStart = opts.runAtStart !== false;
  const job = new Cron(
    '* * * * * *',
    {
      interval: opts.intervalSeconds,
      protect: true,
      name: 'scan',
      catch: (err) => opts.logger.error('scan job error', { error: errorText(err) }),
      // croner's first trigger is the next whole second; after a scan at start it would start a
      // second full scan a second later (a quick one, e.g. replay or a backed-off source, is done
      // by then). The first scheduled scan waits one interval instead.
      ...(runAtStart ? { startAt: new Date(Date.now() + opts.intervalSeconds * 1000) } : {}),
    },
    () => runOnce(),
  );
  if (runAtStart) void runOnce();
  return {
    runNow: runOnce,
    nextRunAt: () => job.nextRun()?.getTime() ?? null,
    isBusy: () => inflight !== null,
    async stop() {
      job.stop();
      if (inflight !== null) await inflight;
    },
  };
}

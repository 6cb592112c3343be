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
  const job = new Cron(
    '* * * * * *',
    { interval: opts.intervalSeconds, protect: true, name: 'scan', catch: (err) => opts.logger.error('scan job error', { error: errorText(err) }) },
    () => runOnce(),
  );
  if (opts.runAtStart !== false) void runOnce();
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

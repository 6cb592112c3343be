import type { Config } from '../config.ts';
import type { ScanSummary } from './scan.ts';
import type { SourceStatus } from './sources/source.ts';
import type { FromWorker, ToWorker } from './worker-protocol.ts';

/**
 * Where the worker's entry is. From source it sits beside this file; in a compiled binary every
 * module of the main bundle reports the entry's own URL (`/$bunfs/root/main…`), and the worker
 * entry keeps its path relative to src/.
 */
function workerUrl(): string {
  const here = import.meta.url;
  return new URL(here.includes('/$bunfs/') ? './scanner/worker-entry.ts' : './worker-entry.ts', here).href;
}

/**
 * The main thread's handle on the scanner worker: `scan()` resolves with the summary once the
 * worker's transaction has committed; `statuses()` answers health from the last report.
 */
export class ScannerWorker {
  private readonly worker: Worker;
  private last: SourceStatus[] = [];
  private pending: { resolve: (s: ScanSummary) => void; reject: (e: Error) => void } | null = null;
  private stopped: (() => void) | null = null;
  private readonly ready: Promise<void>;

  constructor(config: Config) {
    this.worker = new Worker(workerUrl());
    this.ready = new Promise<void>((resolve, reject) => {
      this.worker.onmessage = (e: MessageEvent<FromWorker>) => {
        const m = e.data;
        switch (m.type) {
          case 'ready':
            this.last = m.statuses;
            resolve();
            break;
          case 'init-failed':
            reject(new Error(m.error));
            break;
          case 'done':
            this.last = m.statuses;
            this.pending?.resolve(m.summary);
            this.pending = null;
            break;
          case 'failed':
            this.last = m.statuses;
            this.pending?.reject(new Error(m.error));
            this.pending = null;
            break;
          case 'stopped':
            this.stopped?.();
            break;
        }
      };
      this.worker.onerror = (e) => {
        const err = new Error(`scanner worker: ${e.message}`);
        reject(err);
        this.pending?.reject(err);
        this.pending = null;
      };
    });
    this.send({ type: 'init', config });
  }

  private send(m: ToWorker): void {
    this.worker.postMessage(m);
  }

  /** Resolves once the worker has opened its connection and built its sources. */
  started(): Promise<void> {
    return this.ready;
  }

  async scan(): Promise<ScanSummary> {
    await this.ready;
    if (this.pending !== null) throw new Error('a scan is already running');
    return await new Promise<ScanSummary>((resolve, reject) => {
      this.pending = { resolve, reject };
      this.send({ type: 'scan' });
    });
  }

  /** Back-off state as of the last report; a back-off whose time has passed reads as ok. */
  statuses(now: number): SourceStatus[] {
    return this.last.map((s) => (s.state === 'backing_off' && s.until !== null && s.until <= now ? { ...s, state: 'ok', until: null, reason: null } : s));
  }

  /** Aborts the scan in flight (its cells fail, nothing is cleared), lets it commit, then ends the thread. */
  async stop(): Promise<void> {
    const done = new Promise<void>((resolve) => (this.stopped = resolve));
    this.send({ type: 'stop' });
    await Promise.race([done, Bun.sleep(30_000)]);
    this.worker.terminate();
  }
}

/**
 * The server exactly as `trafik serve` runs it (src/server.ts `startServer`), without the croner
 * loop, for benchmarks that time its parts: serve's loop body is `scan()` (the scanner),
 * `feed.poll()` and `readModel.refreshAsync(yieldToLoop)`; callers run those themselves.
 *
 * `mainThread`: the scan on this thread instead of the worker (how serve ran before 64c9c15), on
 * a second connection, for comparison. `deferScanner`: the worker starts on `startScanner()`, to
 * measure what it adds.
 */
import { systemClock } from '../../src/clock.ts';
import { buildSources, openRuntime, scanAndPurge } from '../../src/commands/runtime.ts';
import type { Config } from '../../src/config.ts';
import { openDatabase, type OpenedDb } from '../../src/db/client.ts';
import type { App } from '../../src/http/app.ts';
import type { Limits } from '../../src/limits/index.ts';
import type { Logger } from '../../src/log.ts';
import type { WindowSource } from '../../src/read-model/load-window.ts';
import type { ReadModel } from '../../src/read-model/read-model.ts';
import type { ScanSummary } from '../../src/scanner/scan.ts';
import { ScannerWorker } from '../../src/scanner/worker-client.ts';
import { startServer, type Scanner } from '../../src/server.ts';
import type { ChangeFeed } from '../../src/stream/feed.ts';

export interface ServeLikeOptions {
  databasePath: string;
  /** The Waze georss URL the sources call. */
  wazeUrl: string;
  mainThread?: boolean;
  /** Start the scanner later, with `startScanner()` (to measure what it adds). */
  deferScanner?: boolean;
  /** Wraps the read model's window source (e.g. to time its queries); identity by default. */
  wrapSource?: (s: WindowSource) => WindowSource;
}

export interface ServeLike {
  config: Config;
  main: OpenedDb;
  app: App;
  readModel: ReadModel;
  feed: ChangeFeed;
  limits: Limits;
  /** http://127.0.0.1:port */
  origin: string;
  startScanner(): Promise<void>;
  /** One scan (and retention purge), committed when this resolves. */
  scan(): Promise<ScanSummary>;
  stop(): Promise<void>;
}

export async function startServeLike(opts: ServeLikeOptions): Promise<ServeLike> {
  const clock = systemClock;
  const { config, logger, main } = openRuntime({
    SOURCES: 'waze',
    WAZE_URL: opts.wazeUrl,
    DATABASE_PATH: opts.databasePath,
    LOG_LEVEL: 'error',
    HOST: '127.0.0.1',
    PORT: '0',
    // The latency client is one address asking far more than a user would: limits that it never
    // reaches, so every request takes the normal path (counted, flushed behind) and never the 429.
    RATE_LIMIT_PER_MINUTE: '1000000',
    FREE_MONTHLY_QUOTA: '1000000000',
  });
  buildSources(config, clock);
  // The scanner behind a handle that can start later; serve itself starts the worker at once.
  let inner: Scanner | null = null;
  const startScanner = async () => {
    if (inner !== null) return;
    if (opts.mainThread) inner = inProcessScanner(config, logger);
    else {
      const w = new ScannerWorker(config);
      await w.started();
      inner = w;
    }
  };
  const scanner: Scanner = {
    scan: () => (inner === null ? Promise.reject(new Error('scanner not started')) : inner.scan()),
    statuses: (now) => inner?.statuses(now) ?? [],
    stop: async () => inner?.stop(),
  };
  if (!opts.deferScanner) await startScanner();
  const server = await startServer({ config, logger, main, clock, loop: false, scanner, ...(opts.wrapSource ? { wrapSource: opts.wrapSource } : {}) });
  if (opts.mainThread) main.sqlite.exec('PRAGMA wal_autocheckpoint = 1000');
  return {
    config,
    main,
    app: server.app,
    readModel: server.readModel,
    feed: server.feed,
    limits: server.limits,
    origin: `http://127.0.0.1:${server.port}`,
    startScanner,
    scan: () => scanner.scan(),
    stop: () => server.stop(),
  };
}

function inProcessScanner(config: Config, logger: Logger): Scanner {
  const writer = openDatabase(config.databasePath);
  const sources = buildSources(config, systemClock);
  const abort = new AbortController();
  return {
    scan: () => scanAndPurge({ writer, sources, config, logger, clock: systemClock, signal: abort.signal }),
    statuses: () => sources.map((s) => s.status()),
    async stop() {
      abort.abort();
      writer.sqlite.close();
    },
  };
}

/**
 * A server assembled the way `trafik serve` assembles one (src/commands/serve.ts), minus the
 * croner loop and the signal handling, for benchmarks that need to time its parts: the main
 * connection from openRuntime with `wal_autocheckpoint = 0`, a ScannerWorker on the same file,
 * the limits gate with its write-behind flush, the read model over sqliteWindowSource, the
 * change feed, the app listening. serve's scan loop body is `scan()`, then
 * `readModel.refreshAsync(yieldToLoop)`, then `feed.poll()`; callers run those three themselves.
 *
 * `mainThread`: the server as it was before the worker (commit 64c9c15^): scanAndPurge on this
 * thread, on a second connection, the main connection autocheckpointing.
 */
import { systemClock } from '../../src/clock.ts';
import { buildSources, markInterruptedScans, openRuntime, scanAndPurge } from '../../src/commands/runtime.ts';
import type { Config } from '../../src/config.ts';
import { openDatabase, type OpenedDb } from '../../src/db/client.ts';
import { createApp, type App } from '../../src/http/app.ts';
import { limitsGate } from '../../src/http/plugins/limits.ts';
import { Limits } from '../../src/limits/index.ts';
import type { Logger } from '../../src/log.ts';
import { checkHealth } from '../../src/modules/health/service.ts';
import { StreamHub } from '../../src/modules/stream/service.ts';
import { sqliteWindowSource, type WindowSource } from '../../src/read-model/load-window.ts';
import { ReadModel } from '../../src/read-model/read-model.ts';
import type { ScanSummary } from '../../src/scanner/scan.ts';
import { ScannerWorker } from '../../src/scanner/worker-client.ts';
import { ChangeFeed } from '../../src/stream/feed.ts';

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
  markInterruptedScans(main.sqlite, clock());
  let scanner: { scan(): Promise<ScanSummary>; stop(): Promise<void> } | null = null;
  const startScanner = async () => {
    if (scanner !== null) return;
    scanner = opts.mainThread ? inProcessScanner(config, logger) : await workerScanner(config);
  };
  if (!opts.mainThread) main.sqlite.exec('PRAGMA wal_autocheckpoint = 0');
  if (!opts.deferScanner) await startScanner();

  const limits = new Limits({ sqlite: main.sqlite, rateLimitPerMinute: config.rateLimitPerMinute, freeMonthlyQuota: config.freeMonthlyQuota, trustProxy: config.trustProxy, clock, logger });
  limits.restoreWindows();
  limits.start();
  const source = sqliteWindowSource(main.sqlite);
  const readModel = new ReadModel(opts.wrapSource ? opts.wrapSource(source) : source, clock, config.scanIntervalSeconds);
  const feed = new ChangeFeed(main.sqlite);
  const streams = new StreamHub(feed);
  const startedAt = clock();
  const loopView = { sources: config.sources, intervalSeconds: config.scanIntervalSeconds, nextScanAt: () => null, sourceStatuses: () => [] };
  const app = createApp({
    readModel,
    streams,
    sqlite: main.sqlite,
    historyDays: config.historyDays,
    clock,
    logger,
    release: 'bench',
    publicUrl: config.publicUrl,
    gate: limitsGate(limits, { publicUrl: config.publicUrl }),
    health: () => checkHealth({ db: main.db, clock, startedAt, release: 'bench', loop: loopView, activeEvents: () => readModel.activeCount }),
  });
  app.listen({ port: config.port, hostname: config.host });
  return {
    config,
    main,
    app,
    readModel,
    feed,
    limits,
    origin: `http://127.0.0.1:${app.server!.port}`,
    startScanner,
    scan: async () => {
      if (scanner === null) throw new Error('scanner not started');
      return await scanner.scan();
    },
    async stop() {
      streams.closeAll();
      await scanner?.stop();
      await app.stop(true);
      limits.close();
      main.sqlite.close();
    },
  };
}

async function workerScanner(config: Config) {
  const w = new ScannerWorker(config);
  await w.started();
  return w;
}

function inProcessScanner(config: Config, logger: Logger) {
  const writer = openDatabase(config.databasePath);
  const sources = buildSources(config, systemClock);
  const abort = new AbortController();
  return {
    scan: () => scanAndPurge({ writer, sources, config, logger, clock: systemClock, signal: abort.signal }),
    async stop() {
      abort.abort();
      writer.sqlite.close();
    },
  };
}

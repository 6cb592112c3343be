import type { Database } from 'bun:sqlite';
import { iso, type Clock } from './clock.ts';
import { ConfigError, type Config } from './config.ts';
import { isBusy, openDatabase, type OpenedDb } from './db/client.ts';
import { DatabaseLease, processHolder, type Acquired } from './db/lease.ts';
import { createApp, type App } from './http/app.ts';
import { limitsGate } from './http/plugins/limits.ts';
import { startScanLoop, type ScanLoop } from './jobs/scan-loop.ts';
import { KeyStore } from './keys/store.ts';
import { Limits } from './limits/index.ts';
import { errorText, type Logger } from './log.ts';
import { checkHealth } from './modules/health/service.ts';
import { RETRY_MS, StreamHub } from './modules/stream/service.ts';
import { sqliteWindowSource, type WindowSource } from './read-model/load-window.ts';
import { ReadModel } from './read-model/read-model.ts';
import { RELEASE } from './release.ts';
import { yieldToLoop } from './scanner/pool.ts';
import { markInterruptedScans, type ScanSummary } from './scanner/scan.ts';
import type { SourceStatus } from './scanner/sources/source.ts';
import { ScannerWorker } from './scanner/worker-client.ts';
import { ChangeFeed } from './stream/feed.ts';
import { startWebhookWorker, type WebhookWorker } from './webhooks/worker.ts';

/** A serve that stops renewing its lease (frozen, or killed on another host) loses it after this. */
const LEASE_TTL_MS = 60_000;
const LEASE_RENEW_MS = 5_000;

/** The window moves even when no scan lands: rebuild at least this often. */
const WINDOW_REFRESH_MS = 60_000;

/** What runs the scans: the worker thread in production; benchmarks may compare other shapes. */
export interface Scanner {
  scan(): Promise<ScanSummary>;
  statuses(now: number): SourceStatus[];
  stop(): Promise<void>;
}

export interface ServerOptions {
  config: Config;
  logger: Logger;
  /** The main connection (openRuntime), migrated. */
  main: OpenedDb;
  clock: Clock;
  /** Schedule scans with croner (serve); false when the caller drives `scanOnce()` (benchmarks). */
  loop?: boolean;
  /** Replaces the scanner worker (benchmarks); it must run scans on its own connection. */
  scanner?: Scanner;
  /** Wraps the read model's source (benchmarks time its queries). */
  wrapSource?: (s: WindowSource) => WindowSource;
}

export interface Server {
  app: App;
  port: number;
  readModel: ReadModel;
  feed: ChangeFeed;
  limits: Limits;
  /** One scan and everything serve does after it: webhooks woken, streams fed, the view rebuilt. */
  scanOnce(): Promise<ScanSummary>;
  /** Graceful stop: the scan in flight commits, quotas and rate windows are saved, all closed. */
  stop(): Promise<void>;
}

/**
 * The running service as `trafik serve` assembles it: the HTTP app on the main thread, scans in a
 * worker thread on their own connection (readers never see half a scan, and the HTTP thread
 * never does scan work), webhook deliveries on a never-waiting connection, the limits gate with
 * its write-behind, and the 24-hour view rebuilt in steps after every commit.
 */
export async function startServer(opts: ServerOptions): Promise<Server> {
  const lease = takeServeLease(opts);
  try {
    return await serveHolding(opts, lease);
  } catch (err) {
    // A start that fails after taking the lease gives it back: a retry must not wait it out.
    try {
      lease(opts.main.sqlite).release();
    } catch {}
    throw err;
  }
}

/**
 * One serve per database file: a second would scan twice, send every webhook twice and mark the
 * first one's scan as interrupted. Takes the database's `serve` lease, or refuses (exit 2) naming
 * the process that holds it. Returns the lease on a given connection.
 */
function takeServeLease(opts: ServerOptions): (sqlite: Database) => DatabaseLease {
  const { config, main, clock } = opts;
  const holder = processHolder();
  const lease = (sqlite: Database) => new DatabaseLease(sqlite, { name: 'serve', holder, ttlMs: LEASE_TTL_MS, clock });
  let acquired: Acquired;
  try {
    acquired = lease(main.sqlite).acquire();
  } catch (err) {
    if (isBusy(err)) throw new ConfigError('DATABASE_PATH', `${config.databasePath} stayed locked by another process writing to it; try again`);
    throw err;
  }
  if (!acquired.ok) {
    const h = acquired.heldBy;
    throw new ConfigError(
      'DATABASE_PATH',
      `another trafik serve (pid ${h.pid} on ${h.host}, since ${iso(h.since)}) runs on ${config.databasePath}; stop it first (two would scan twice and send every webhook twice)`,
    );
  }
  return lease;
}

async function serveHolding(opts: ServerOptions, lease: (sqlite: Database) => DatabaseLease): Promise<Server> {
  const { config, logger, main, clock } = opts;
  const interrupted = markInterruptedScans(main.sqlite, clock());
  if (interrupted > 0) logger.warn('marked interrupted scans', { count: interrupted });
  // WAL checkpoints happen after the scanner's commits; this thread's small write-behind commits
  // must not run one on the event loop.
  main.sqlite.exec('PRAGMA wal_autocheckpoint = 0');
  let scanner: Scanner;
  if (opts.scanner) scanner = opts.scanner;
  else {
    const w = new ScannerWorker(config);
    await w.started();
    scanner = w;
  }
  const hooksDb = openDatabase(config.databasePath, { busyTimeoutMs: 0 });
  hooksDb.sqlite.exec('PRAGMA wal_autocheckpoint = 0');
  const webhooks: WebhookWorker = startWebhookWorker({ db: hooksDb.sqlite, clock, logger, allowPrivate: config.webhookAllowPrivate });

  // Rate windows saved at the last graceful stop come back; quotas are written behind every second.
  const limits = new Limits({ sqlite: main.sqlite, rateLimitPerMinute: config.rateLimitPerMinute, freeMonthlyQuota: config.freeMonthlyQuota, trustProxy: config.trustProxy, clock, logger });
  const restored = limits.restoreWindows();
  if (restored > 0) logger.info('restored rate windows', { buckets: restored });
  limits.start();

  const source = sqliteWindowSource(main.sqlite);
  const readModel = new ReadModel(opts.wrapSource ? opts.wrapSource(source) : source, clock, config.scanIntervalSeconds);
  const feed = new ChangeFeed(main.sqlite);
  const keyStore = new KeyStore(main.sqlite);
  const streams = new StreamHub(feed, RETRY_MS, (keyId) => keyStore.isActiveEnterprise(keyId));
  const startedAt = clock();
  let loop: ScanLoop | null = null;
  const loopView = {
    sources: config.sources,
    intervalSeconds: config.scanIntervalSeconds,
    nextScanAt: () => loop?.nextRunAt() ?? null,
    sourceStatuses: () => scanner.statuses(clock()),
  };
  const app = createApp({
    readModel,
    streams,
    sqlite: main.sqlite,
    historyDays: config.historyDays,
    clock,
    logger,
    release: RELEASE,
    publicUrl: config.publicUrl,
    gate: limitsGate(limits, { publicUrl: config.publicUrl }),
    health: () => checkHealth({ db: main.db, clock, startedAt, release: RELEASE, loop: loopView, activeEvents: () => readModel.activeCount }),
  });
  try {
    app.listen({ port: config.port, hostname: config.host });
  } catch (err) {
    await scanner.stop();
    await webhooks.stop();
    throw new ConfigError('PORT', `cannot listen on ${config.host}:${config.port}: ${errorText(err).replace(/^\w*Error: /, '')}`);
  }

  const scanOnce = async (): Promise<ScanSummary> => {
    const summary = await scanner.scan();
    webhooks.wake();
    feed.poll();
    await readModel.refreshAsync(yieldToLoop);
    return summary;
  };
  if (opts.loop !== false) loop = startScanLoop({ intervalSeconds: config.scanIntervalSeconds, logger, scan: scanOnce });
  const windowTimer = setInterval(() => {
    if (!loop?.isBusy() && clock() - readModel.builtAt >= WINDOW_REFRESH_MS) {
      readModel.refreshAsync(yieldToLoop).catch((err) => logger.error('read model refresh failed', { error: errorText(err) }));
    }
  }, 10_000);

  // Renewed on the never-waiting connection, so a scan holding the write lock makes a renewal
  // wait for the next tick, never the event loop. Lost after a stall longer than its ttl: taken
  // back if free; if another serve took it, this one stops scanning and sending webhooks.
  const renewal = lease(hooksDb.sqlite);
  const leaseTimer = setInterval(() => {
    try {
      if (renewal.renew()) return;
      const again = renewal.acquire();
      if (again.ok) {
        logger.warn('took the serve lease back after it had expired');
        return;
      }
      clearInterval(leaseTimer);
      logger.error('another trafik serve took over this database; this one stops scanning and sending webhooks, HTTP keeps serving', {
        pid: again.heldBy.pid,
        host: again.heldBy.host,
      });
      void loop?.stop();
      void webhooks.stop();
    } catch (err) {
      if (!isBusy(err)) logger.warn('serve lease renewal failed; will retry', { error: errorText(err) });
    }
  }, LEASE_RENEW_MS);

  return {
    app,
    port: app.server!.port as number,
    readModel,
    feed,
    limits,
    scanOnce,
    async stop() {
      clearInterval(windowTimer);
      clearInterval(leaseTimer);
      streams.closeAll();
      // Aborts the scan in flight (its remaining cells fail, so nothing is cleared) and lets it
      // commit; the loop then sees it finish.
      const scannerStopped = scanner.stop();
      await loop?.stop();
      await scannerStopped;
      await webhooks.stop();
      hooksDb.sqlite.close();
      await app.stop();
      limits.close();
      try {
        lease(main.sqlite).release();
      } catch (err) {
        logger.warn('could not give the serve lease back; it expires by itself', { error: errorText(err) });
      }
      main.sqlite.close();
    },
  };
}

import { systemClock } from '../clock.ts';
import { createApp } from '../http/app.ts';
import { limitsGate } from '../http/plugins/limits.ts';
import { Limits } from '../limits/index.ts';
import { startScanLoop } from '../jobs/scan-loop.ts';
import { errorText } from '../log.ts';
import { ConfigError } from '../config.ts';
import { checkHealth } from '../modules/health/service.ts';
import { sqliteWindowSource } from '../read-model/load-window.ts';
import { ReadModel } from '../read-model/read-model.ts';
import { yieldToLoop } from '../scanner/pool.ts';
import { RETRY_MS, StreamHub } from '../modules/stream/service.ts';
import { KeyStore } from '../keys/store.ts';
import { ChangeFeed } from '../stream/feed.ts';
import { RELEASE } from '../release.ts';
import { UsageError } from '../cli/args.ts';
import { ScannerWorker } from '../scanner/worker-client.ts';
import { openDatabase } from '../db/client.ts';
import { startWebhookWorker } from '../webhooks/worker.ts';
import { buildSources, markInterruptedScans, openRuntime } from './runtime.ts';

/** The window moves even when no scan lands: rebuild at least this often. */
const WINDOW_REFRESH_MS = 60_000;

export async function serveCommand(argv: string[]): Promise<number> {
  if (argv.length > 0) throw new UsageError(`serve takes no arguments (got ${argv[0]}); configure it with environment variables`);
  const clock = systemClock;
  const { config, logger, main } = openRuntime();
  // Validates the source configuration here, so a bad one stops the start with exit code 2.
  buildSources(config, clock);
  const interrupted = markInterruptedScans(main.sqlite, clock());
  if (interrupted > 0) logger.warn('marked interrupted scans', { count: interrupted });
  // Scans run in a worker thread on its own connection (readers never see half a scan, and the
  // HTTP thread never runs scan work). WAL checkpoints happen after the worker's commits; this
  // thread's small write-behind commits must not run one on the event loop.
  main.sqlite.exec('PRAGMA wal_autocheckpoint = 0');
  const scanner = new ScannerWorker(config);
  await scanner.started();
  // Webhook deliveries: their own connection that never waits on a lock (the scanner's commit
  // holds it for a moment); woken after every scan commit, and on its own 1 s timer.
  const hooksDb = openDatabase(config.databasePath, { busyTimeoutMs: 0 });
  hooksDb.sqlite.exec('PRAGMA wal_autocheckpoint = 0');
  const webhooks = startWebhookWorker({ db: hooksDb.sqlite, clock, logger, allowPrivate: config.webhookAllowPrivate });

  // Rate windows saved at the last graceful stop come back; quotas are written behind every second.
  const limits = new Limits({ sqlite: main.sqlite, rateLimitPerMinute: config.rateLimitPerMinute, freeMonthlyQuota: config.freeMonthlyQuota, trustProxy: config.trustProxy, clock, logger });
  const restored = limits.restoreWindows();
  if (restored > 0) logger.info('restored rate windows', { buckets: restored });
  limits.start();

  const readModel = new ReadModel(sqliteWindowSource(main.sqlite), clock, config.scanIntervalSeconds);
  const feed = new ChangeFeed(main.sqlite);
  const keyStore = new KeyStore(main.sqlite);
  const streams = new StreamHub(feed, RETRY_MS, (keyId) => keyStore.isActiveEnterprise(keyId));
  const startedAt = clock();
  let loop: ReturnType<typeof startScanLoop> | null = null;
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
    throw new ConfigError('PORT', `cannot listen on ${config.host}:${config.port}: ${errorText(err).replace(/^\w*Error: /, '')}`);
  }
  const port = app.server?.port;
  logger.info('listening', { host: config.host, port, release: RELEASE, database: config.databasePath, sources: config.sources });

  loop = startScanLoop({
    intervalSeconds: config.scanIntervalSeconds,
    logger,
    scan: async () => {
      await scanner.scan();
      webhooks.wake();
      feed.poll();
      await readModel.refreshAsync(yieldToLoop);
    },
  });
  const windowTimer = setInterval(() => {
    if (!loop?.isBusy() && clock() - readModel.builtAt >= WINDOW_REFRESH_MS) {
      readModel.refreshAsync(yieldToLoop).catch((err) => logger.error('read model refresh failed', { error: errorText(err) }));
    }
  }, 10_000);

  return await new Promise<number>((resolve) => {
    let stopping = false;
    const stop = async (signal: string) => {
      if (stopping) return;
      stopping = true;
      logger.info('stopping', { signal });
      clearInterval(windowTimer);
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
      main.sqlite.close();
      logger.info('stopped', { signal });
      resolve(0);
    };
    process.once('SIGTERM', () => void stop('SIGTERM'));
    process.once('SIGINT', () => void stop('SIGINT'));
  });
}

import { systemClock } from '../clock.ts';
import { openDatabase } from '../db/client.ts';
import { createApp } from '../http/app.ts';
import { limitsGate } from '../http/plugins/limits.ts';
import { Limits } from '../limits/index.ts';
import { startScanLoop } from '../jobs/scan-loop.ts';
import { errorText } from '../log.ts';
import { checkHealth } from '../modules/health/service.ts';
import { sqliteWindowSource } from '../read-model/load-window.ts';
import { ReadModel } from '../read-model/read-model.ts';
import { yieldToLoop } from '../scanner/pool.ts';
import { StreamHub } from '../modules/stream/service.ts';
import { ChangeFeed } from '../stream/feed.ts';
import { RELEASE } from '../release.ts';
import { UsageError } from '../cli/args.ts';
import { buildSources, markInterruptedScans, openRuntime, scanAndPurge } from './runtime.ts';

/** The window moves even when no scan lands: rebuild at least this often. */
const WINDOW_REFRESH_MS = 60_000;

export async function serveCommand(argv: string[]): Promise<number> {
  if (argv.length > 0) throw new UsageError(`serve takes no arguments (got ${argv[0]}); configure it with environment variables`);
  const clock = systemClock;
  const { config, logger, main } = openRuntime();
  const sources = buildSources(config, clock);
  // The scanner writes on its own connection (see runScan): HTTP reads never see half a scan.
  const writer = openDatabase(config.databasePath);
  const interrupted = markInterruptedScans(writer.sqlite, clock());
  if (interrupted > 0) logger.warn('marked interrupted scans', { count: interrupted });

  // Rate windows saved at the last graceful stop come back; quotas are written behind every second.
  const limits = new Limits({ sqlite: main.sqlite, rateLimitPerMinute: config.rateLimitPerMinute, freeMonthlyQuota: config.freeMonthlyQuota, trustProxy: config.trustProxy, clock, logger });
  const restored = limits.restoreWindows();
  if (restored > 0) logger.info('restored rate windows', { buckets: restored });
  limits.start();

  const readModel = new ReadModel(sqliteWindowSource(main.sqlite), clock, config.scanIntervalSeconds);
  const feed = new ChangeFeed(main.sqlite);
  const streams = new StreamHub(feed);
  const startedAt = clock();
  const abort = new AbortController();
  let loop: ReturnType<typeof startScanLoop> | null = null;
  const loopView = {
    sources: config.sources,
    intervalSeconds: config.scanIntervalSeconds,
    nextScanAt: () => loop?.nextRunAt() ?? null,
    sourceStatuses: () => sources.map((s) => s.status()),
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
  app.listen({ port: config.port, hostname: config.host });
  const port = app.server?.port;
  logger.info('listening', { host: config.host, port, release: RELEASE, database: config.databasePath, sources: config.sources });

  loop = startScanLoop({
    intervalSeconds: config.scanIntervalSeconds,
    logger,
    scan: async () => {
      await scanAndPurge({ writer, sources, config, logger, clock, signal: abort.signal });
      await readModel.refreshAsync(yieldToLoop);
      feed.poll();
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
      abort.abort();
      streams.closeAll();
      await loop?.stop();
      await app.stop();
      limits.close();
      writer.sqlite.close();
      main.sqlite.close();
      logger.info('stopped', { signal });
      resolve(0);
    };
    process.once('SIGTERM', () => void stop('SIGTERM'));
    process.once('SIGINT', () => void stop('SIGINT'));
  });
}

import { loadConfig, type Config } from '../config.ts';
import { openDatabase, type OpenedDb } from '../db/client.ts';
import { applyMigrations } from '../db/migrate.ts';
import { createLogger, errorText, type Logger } from '../log.ts';
import { GRID_CELLS } from '../scanner/grid/index.ts';
import { markInterruptedScans, runScan, type ScanSummary } from '../scanner/scan.ts';
import { createSources, SourceConfigError } from '../scanner/sources/index.ts';
import type { Source } from '../scanner/sources/source.ts';
import { ConfigError } from '../config.ts';
import { purgeOld } from '../scanner/retention.ts';
import type { Clock } from '../clock.ts';

/** What every command starts from: validated config, a logger, the migrated database. */
export interface Runtime {
  config: Config;
  logger: Logger;
  main: OpenedDb;
}

export function openRuntime(env: Record<string, string | undefined> = process.env, opts: { logToStderr?: boolean } = {}): Runtime {
  const config = loadConfig(env);
  // One-shot commands keep stdout for their result (e.g. `scan --once --json`).
  const logger = createLogger(config.logLevel, opts.logToStderr ? (l) => process.stderr.write(l) : undefined);
  let main: OpenedDb;
  try {
    main = openDatabase(config.databasePath);
    applyMigrations(main.db);
  } catch (err) {
    throw new ConfigError('DATABASE_PATH', `cannot open '${config.databasePath}' as the database: ${errorText(err).replace(/^\w*Error: /, '')}`);
  }
  return { config, logger, main };
}

export function buildSources(config: Config, clock: Clock): Source[] {
  try {
    return createSources(config, { now: clock });
  } catch (err) {
    if (err instanceof SourceConfigError) throw new ConfigError(err.variable, err.message.replace(`${err.variable}: `, '').replace(`${err.variable} `, ''));
    throw err;
  }
}

/** One scan plus retention, on the scanner's own connection. */
export async function scanAndPurge(deps: {
  writer: OpenedDb;
  sources: Source[];
  config: Config;
  logger: Logger;
  clock: Clock;
  signal?: AbortSignal;
}): Promise<ScanSummary> {
  const summary = await runScan({ writer: deps.writer.sqlite, sources: deps.sources, cells: GRID_CELLS, clock: deps.clock, logger: deps.logger, signal: deps.signal });
  const purged = await purgeOld(deps.writer.sqlite, deps.clock(), deps.config.historyDays);
  if (purged.events + purged.changes + purged.scans > 0) deps.logger.info('retention purge', { ...purged });
  return summary;
}

export { markInterruptedScans };

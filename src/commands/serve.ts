import { UsageError } from '../cli/args.ts';
import { systemClock } from '../clock.ts';
import { RELEASE } from '../release.ts';
import { startServer } from '../server.ts';
import { buildSources, openRuntime } from './runtime.ts';

/** `trafik serve` (the default): the API and the scan loop until SIGTERM/SIGINT. */
export async function serveCommand(argv: string[]): Promise<number> {
  if (argv.length > 0) throw new UsageError(`serve takes no arguments (got ${argv[0]}); configure it with environment variables`);
  const clock = systemClock;
  const { config, logger, main } = openRuntime();
  // Validates the source configuration here, so a bad one stops the start with exit code 2.
  buildSources(config, clock);

  const server = await startServer({ config, logger, main, clock });

  return await new Promise<number>((resolve) => {
    let stopping = false;
    const stop = async (signal: string) => {
      if (stopping) return;
      stopping = true;
      logger.info('stopping', { signal });
      await server.stop();
      logger.info('stopped', { signal });
      resolve(0);
    };
    process.once('SIGTERM', () => void stop('SIGTERM'));
    process.once('SIGINT', () => void stop('SIGINT'));
    // Only now: whoever waits for this line may signal the process at once.
    logger.info('listening', { host: config.host, port: server.port, release: RELEASE, database: config.databasePath, sources: config.sources });
  });
}

import { onlyFlags, parseArgs, UsageError } from '../cli/args.ts';
import { systemClock } from '../clock.ts';
import { STALE_RUN_MS } from '../scanner/scan.ts';
import { buildSources, markInterruptedScans, openRuntime, scanAndPurge } from './runtime.ts';

/** `trafik scan --once`: one full scan against the configured database, then exit. */
export async function scanCommand(argv: string[]): Promise<number> {
  const args = parseArgs(argv, []);
  onlyFlags(args, ['once', 'json']);
  if (!args.flags.has('once')) throw new UsageError('scan needs --once (the continuous loop is `trafik serve`)');
  if (args.positionals.length > 0) throw new UsageError(`unexpected argument '${args.positionals[0]}'`);
  const { config, logger, main } = openRuntime(process.env, { logToStderr: true });
  const sources = buildSources(config, systemClock);
  // A server may be scanning this database right now: close only runs too old to be anyone's.
  const now = systemClock();
  markInterruptedScans(main.sqlite, now, now - STALE_RUN_MS);
  // Ctrl-C / SIGTERM: the cells not fetched yet fail (so nothing is cleared) and the scan commits
  // what it has, instead of leaving its run row 'running'.
  const abort = new AbortController();
  for (const sig of ['SIGINT', 'SIGTERM'] as const) process.once(sig, () => abort.abort());
  const s = await scanAndPurge({ writer: main, sources, config, logger, clock: systemClock, signal: abort.signal });
  main.sqlite.close();
  const line = args.flags.has('json')
    ? JSON.stringify(s)
    : `scan ${s.id}: ${s.status}, cells ${s.cellsOk}/${s.cellsTotal} ok, ${s.items} items, created ${s.created}, updated ${s.updated}, cleared ${s.cleared}, ${s.finishedAt - s.startedAt} ms`;
  process.stdout.write(`${line}\n`);
  return s.cellsOk === 0 ? 1 : 0;
}

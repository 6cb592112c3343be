import { join } from 'node:path';
import { pin } from './load.ts';

/**
 * `trafik serve` as its own process on CPU 0, over a seeded database, scanning an empty replay
 * folder once a day (so no scan runs during a measurement), logging only warnings. `env` adds or
 * overrides settings (limits, TRUST_PROXY).
 */
export function spawnServe(opts: { port: number; dbPath: string; replayDir: string; env?: Record<string, string> }): ReturnType<typeof Bun.spawn> {
  return Bun.spawn([...pin(0), 'bun', join(import.meta.dir, '../../src/main.ts'), 'serve'], {
    env: {
      ...process.env,
      PORT: String(opts.port),
      HOST: '127.0.0.1',
      DATABASE_PATH: opts.dbPath,
      SOURCES: 'replay',
      REPLAY_DIR: opts.replayDir,
      SCAN_INTERVAL_SECONDS: '86400',
      LOG_LEVEL: 'warn',
      ...opts.env,
    },
    stdout: 'inherit',
    stderr: 'inherit',
  });
}

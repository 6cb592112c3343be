/** A real `trafik serve` subprocess and the `trafik keys` CLI, on one temporary database. */
import { Database } from 'bun:sqlite';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

export const ROOT = resolve(import.meta.dir, '../..');

export interface Workspace {
  dir: string;
  dbPath: string;
  replayDir: string;
  env: Record<string, string>;
  cleanup(): void;
}

export function workspace(extraEnv: Record<string, string> = {}): Workspace {
  const dir = mkdtempSync(join(tmpdir(), 'trafik-live-'));
  const replayDir = join(dir, 'replay');
  mkdirSync(replayDir);
  const dbPath = join(dir, 'data', 'trafik.db');
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? '',
    HOME: process.env.HOME ?? dir,
    DATABASE_PATH: dbPath,
    SOURCES: 'replay',
    REPLAY_DIR: replayDir,
    SCAN_INTERVAL_SECONDS: '3600',
    HOST: '127.0.0.1',
    PORT: '0',
    LOG_LEVEL: 'info',
    ...extraEnv,
  };
  return { dir, dbPath, replayDir, env, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

export async function cli(ws: Workspace, args: string[]): Promise<CliResult> {
  const proc = Bun.spawn(['bun', 'src/main.ts', ...args], { cwd: ROOT, env: ws.env, stdout: 'pipe', stderr: 'pipe' });
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  return { code, stdout, stderr };
}

export interface LiveServer {
  base: string;
  proc: Bun.Subprocess<'ignore', 'pipe', 'pipe'>;
  logs: string[];
  /** Sends a signal and waits for the exit code. */
  stop(signal?: NodeJS.Signals): Promise<number>;
}

/** Starts `trafik serve` with PORT=0 and reads the bound port from its `listening` log line. */
export async function startServer(ws: Workspace, env: Record<string, string> = {}): Promise<LiveServer> {
  const proc = Bun.spawn(['bun', 'src/main.ts', 'serve'], { cwd: ROOT, env: { ...ws.env, ...env }, stdin: 'ignore', stdout: 'pipe', stderr: 'pipe' });
  const logs: string[] = [];
  let port: number | null = null;
  let resolveReady!: () => void;
  const ready = new Promise<void>((r) => (resolveReady = r));
  void (async () => {
    const decoder = new TextDecoder();
    let buf = '';
    for await (const chunk of proc.stdout) {
      buf += decoder.decode(chunk, { stream: true });
      let nl: number;
      while ((nl = buf.indexOf('\n')) !== -1) {
        const line = buf.slice(0, nl);
        buf = buf.slice(nl + 1);
        logs.push(line);
        try {
          const j = JSON.parse(line) as { msg?: string; port?: number };
          if (j.msg === 'listening' && typeof j.port === 'number') {
            port = j.port;
            resolveReady();
          }
        } catch {}
      }
    }
    resolveReady();
  })();
  const stderr = new Response(proc.stderr).text();
  await Promise.race([ready, Bun.sleep(15_000)]);
  if (port === null) {
    proc.kill('SIGKILL');
    throw new Error(`server did not start: ${logs.join('\n')}\n${await stderr}`);
  }
  return {
    base: `http://127.0.0.1:${port}`,
    proc,
    logs,
    async stop(signal: NodeJS.Signals = 'SIGTERM') {
      proc.kill(signal);
      return await proc.exited;
    },
  };
}

export function readDb<T>(ws: Workspace, fn: (db: Database) => T): T {
  const db = new Database(ws.dbPath, { readonly: true });
  try {
    return fn(db);
  } finally {
    db.close();
  }
}

export function storedQuota(ws: Workspace): Record<string, number> {
  return readDb(ws, (db) => Object.fromEntries((db.query('SELECT subject, count FROM quota_usage').all() as { subject: string; count: number }[]).map((r) => [r.subject, r.count])));
}

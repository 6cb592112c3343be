import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openDatabase, type OpenedDb } from '../../src/db/client.ts';
import { applyMigrations } from '../../src/db/migrate.ts';

export interface TempDb extends OpenedDb {
  dir: string;
  path: string;
  cleanup(): void;
}

/** A real SQLite file in a fresh temp folder, migrated. */
export function tempDb(): TempDb {
  const dir = mkdtempSync(join(tmpdir(), 'trafik-test-'));
  const path = join(dir, 'db', 'trafik.db');
  const opened = openDatabase(path);
  applyMigrations(opened.db);
  return {
    ...opened,
    dir,
    path,
    cleanup() {
      try {
        opened.sqlite.close();
      } catch {}
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

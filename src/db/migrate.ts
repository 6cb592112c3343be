import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { migrate } from 'drizzle-orm/bun-sqlite/migrator';
import type { Db } from './client.ts';

/**
 * The migrations folder: `drizzle/` at the repository root when running from source, and the copy
 * embedded by `bun build --compile --asset drizzle` (rooted at import.meta.dir) inside the binary.
 */
export function migrationsFolder(): string {
  const embedded = join(import.meta.dir, 'drizzle');
  if (existsSync(join(embedded, 'meta', '_journal.json'))) return embedded;
  return join(import.meta.dir, '..', '..', 'drizzle');
}

export function applyMigrations(db: Db): void {
  migrate(db, { migrationsFolder: migrationsFolder() });
}

import { integer, sqliteTable, text } from 'drizzle-orm/sqlite-core';

/**
 * Who runs what on this database file: `serve` takes the `serve` lease at start, renews it while
 * it runs and gives it back at a graceful stop, so a second `serve` on the same file refuses to
 * start instead of scanning twice and sending every webhook twice (src/db/lease.ts).
 */
export const leases = sqliteTable('leases', {
  name: text('name').primaryKey(),
  /** `host:pid:random`, unique per process. */
  holder: text('holder').notNull(),
  host: text('host').notNull(),
  pid: integer('pid').notNull(),
  since: integer('since').notNull(),
  expiresAt: integer('expires_at').notNull(),
});

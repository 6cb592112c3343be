import { index, integer, sqliteTable, text } from 'drizzle-orm/sqlite-core';

export type ScanStatus = 'running' | 'ok' | 'partial' | 'failed';

export interface SourceOutcome {
  cellsOk: number;
  cellsFailed: number;
  requests: number;
  items: number;
  /** Up to a few examples of failed cells, for operators. */
  failures: { cell: string; kind: string; error: string }[];
  backingOff: boolean;
}

export const scanRuns = sqliteTable(
  'scan_runs',
  {
    id: integer('id').primaryKey({ autoIncrement: true }),
    startedAt: integer('started_at').notNull(),
    finishedAt: integer('finished_at'),
    status: text('status').$type<ScanStatus>().notNull(),
    sources: text('sources', { mode: 'json' }).$type<Record<string, SourceOutcome>>().notNull(),
    cellsTotal: integer('cells_total').notNull().default(0),
    cellsOk: integer('cells_ok').notNull().default(0),
    cellsFailed: integer('cells_failed').notNull().default(0),
    items: integer('items').notNull().default(0),
    created: integer('created').notNull().default(0),
    updated: integer('updated').notNull().default(0),
    cleared: integer('cleared').notNull().default(0),
    errors: text('errors', { mode: 'json' }).$type<string[]>().notNull(),
  },
  (t) => [index('scan_runs_started_idx').on(t.startedAt), index('scan_runs_status_idx').on(t.status, t.finishedAt)],
);

export type ScanRunRow = typeof scanRuns.$inferSelect;

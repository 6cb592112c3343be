import { integer, primaryKey, sqliteTable, text, index } from 'drizzle-orm/sqlite-core';

export type Plan = 'free' | 'enterprise';

export const apiKeys = sqliteTable(
  'api_keys',
  {
    id: text('id').primaryKey(),
    /** SHA-256 of the whole key, hex. The key itself is never stored. */
    hash: text('hash').notNull().unique(),
    /** What a human may see again: `trk_live_AbCd…`. */
    prefix: text('prefix').notNull(),
    plan: text('plan').$type<Plan>().notNull(),
    name: text('name').notNull(),
    createdAt: integer('created_at').notNull(),
    lastUsedAt: integer('last_used_at'),
    revokedAt: integer('revoked_at'),
  },
  (t) => [index('api_keys_created_idx').on(t.createdAt)],
);

/** Monthly quota counts; `subject` is `ip:<bucket>` or `key:<id>`, `period` is `YYYY-MM` (Europe/Istanbul). */
export const quotaUsage = sqliteTable(
  'quota_usage',
  {
    subject: text('subject').notNull(),
    period: text('period').notNull(),
    count: integer('count').notNull(),
    updatedAt: integer('updated_at').notNull(),
  },
  (t) => [primaryKey({ columns: [t.subject, t.period] })],
);

/** Per-IP sliding windows, saved at a graceful stop and restored at start (they live 60 s). */
export const rateWindows = sqliteTable('rate_windows', {
  bucket: text('bucket').primaryKey(),
  windowStart: integer('window_start').notNull(),
  current: integer('current').notNull(),
  previous: integer('previous').notNull(),
});

export type ApiKeyRow = typeof apiKeys.$inferSelect;

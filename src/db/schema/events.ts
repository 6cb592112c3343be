import { index, integer, real, sqliteTable, text, uniqueIndex } from 'drizzle-orm/sqlite-core';
import type { ChangeType, EventStatus, EventType, JamDetails, LineString, Severity, SourceName } from '../../domain/event.ts';

/** Times are integer epoch milliseconds throughout; the API formats them as RFC 3339. */
export const events = sqliteTable(
  'events',
  {
    id: text('id').primaryKey(),
    sourceName: text('source_name').$type<SourceName>().notNull(),
    sourceId: text('source_id').notNull(),
    type: text('type').$type<EventType>().notNull(),
    subtype: text('subtype'),
    severity: text('severity').$type<Severity>().notNull(),
    status: text('status').$type<EventStatus>().notNull().default('active'),
    plate: integer('plate').notNull(),
    district: text('district'),
    lat: real('lat').notNull(),
    lon: real('lon').notNull(),
    geometry: text('geometry', { mode: 'json' }).$type<LineString>(),
    road: text('road'),
    description: text('description'),
    jam: text('jam', { mode: 'json' }).$type<JamDetails>(),
    confidence: real('confidence').notNull(),
    reportedAt: integer('reported_at').notNull(),
    firstSeenAt: integer('first_seen_at').notNull(),
    lastSeenAt: integer('last_seen_at').notNull(),
    updatedAt: integer('updated_at').notNull(),
    clearedAt: integer('cleared_at'),
    /** Space-separated `source:cell` keys that saw the event in its last sighting: clearing needs them. */
    cells: text('cells').notNull().default(''),
    /** Consecutive successful scans of its cells that did not see it; 2 clears it. */
    missedScans: integer('missed_scans').notNull().default(0),
    /**
     * Bumped by every write that changes what the API serves, except `last_seen_at` alone, so the
     * read model re-serializes only the events that changed (being seen again is the common case).
     */
    rev: integer('rev').notNull().default(0),
  },
  (t) => [
    uniqueIndex('events_source_idx').on(t.sourceName, t.sourceId),
    // The read model loads "active and seen in the window, or cleared in the window".
    index('events_status_seen_idx').on(t.status, t.lastSeenAt),
    index('events_cleared_idx').on(t.clearedAt),
    // History queries (Enterprise) page by reported_at, optionally per province.
    index('events_reported_idx').on(t.reportedAt, t.id),
    index('events_plate_reported_idx').on(t.plate, t.reportedAt),
    index('events_updated_idx').on(t.updatedAt),
    // Range statistics count the events that began in [from, to].
    index('events_first_seen_idx').on(t.firstSeenAt),
  ],
);

/**
 * The transactional outbox: one row per created/updated/cleared change, written in the same
 * transaction as the event itself. Webhooks and the live stream read it by `seq`.
 */
export const eventChanges = sqliteTable(
  'event_changes',
  {
    seq: integer('seq').primaryKey({ autoIncrement: true }),
    eventId: text('event_id').notNull(),
    change: text('change').$type<ChangeType>().notNull(),
    at: integer('at').notNull(),
    scanId: integer('scan_id'),
    /** The Event JSON as served at the time of the change. */
    payload: text('payload').notNull(),
  },
  (t) => [index('event_changes_at_idx').on(t.at), index('event_changes_event_idx').on(t.eventId)],
);

export type EventRow = typeof events.$inferSelect;
export type NewEventRow = typeof events.$inferInsert;
export type EventChangeRow = typeof eventChanges.$inferSelect;

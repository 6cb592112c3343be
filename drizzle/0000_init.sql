CREATE TABLE `event_changes` (
	`seq` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`event_id` text NOT NULL,
	`change` text NOT NULL,
	`at` integer NOT NULL,
	`scan_id` integer,
	`payload` text NOT NULL
);
--> statement-breakpoint
CREATE INDEX `event_changes_at_idx` ON `event_changes` (`at`);--> statement-breakpoint
CREATE INDEX `event_changes_event_idx` ON `event_changes` (`event_id`);--> statement-breakpoint
CREATE TABLE `events` (
	`id` text PRIMARY KEY NOT NULL,
	`source_name` text NOT NULL,
	`source_id` text NOT NULL,
	`type` text NOT NULL,
	`subtype` text,
	`severity` text NOT NULL,
	`status` text DEFAULT 'active' NOT NULL,
	`plate` integer NOT NULL,
	`district` text,
	`lat` real NOT NULL,
	`lon` real NOT NULL,
	`geometry` text,
	`road` text,
	`description` text,
	`jam` text,
	`confidence` real NOT NULL,
	`reported_at` integer NOT NULL,
	`first_seen_at` integer NOT NULL,
	`last_seen_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	`cleared_at` integer,
	`cells` text DEFAULT '' NOT NULL,
	`missed_scans` integer DEFAULT 0 NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `events_source_idx` ON `events` (`source_name`,`source_id`);--> statement-breakpoint
CREATE INDEX `events_status_seen_idx` ON `events` (`status`,`last_seen_at`);--> statement-breakpoint
CREATE INDEX `events_cleared_idx` ON `events` (`cleared_at`);--> statement-breakpoint
CREATE INDEX `events_reported_idx` ON `events` (`reported_at`,`id`);--> statement-breakpoint
CREATE INDEX `events_plate_reported_idx` ON `events` (`plate`,`reported_at`);--> statement-breakpoint
CREATE INDEX `events_updated_idx` ON `events` (`updated_at`);--> statement-breakpoint
CREATE TABLE `scan_runs` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`started_at` integer NOT NULL,
	`finished_at` integer,
	`status` text NOT NULL,
	`sources` text NOT NULL,
	`cells_total` integer DEFAULT 0 NOT NULL,
	`cells_ok` integer DEFAULT 0 NOT NULL,
	`cells_failed` integer DEFAULT 0 NOT NULL,
	`items` integer DEFAULT 0 NOT NULL,
	`created` integer DEFAULT 0 NOT NULL,
	`updated` integer DEFAULT 0 NOT NULL,
	`cleared` integer DEFAULT 0 NOT NULL,
	`errors` text NOT NULL
);
--> statement-breakpoint
CREATE INDEX `scan_runs_started_idx` ON `scan_runs` (`started_at`);--> statement-breakpoint
CREATE INDEX `scan_runs_status_idx` ON `scan_runs` (`status`,`finished_at`);--> statement-breakpoint
CREATE TABLE `api_keys` (
	`id` text PRIMARY KEY NOT NULL,
	`hash` text NOT NULL,
	`prefix` text NOT NULL,
	`plan` text NOT NULL,
	`name` text NOT NULL,
	`created_at` integer NOT NULL,
	`last_used_at` integer,
	`revoked_at` integer
);
--> statement-breakpoint
CREATE UNIQUE INDEX `api_keys_hash_unique` ON `api_keys` (`hash`);--> statement-breakpoint
CREATE INDEX `api_keys_created_idx` ON `api_keys` (`created_at`);--> statement-breakpoint
CREATE TABLE `quota_usage` (
	`subject` text NOT NULL,
	`period` text NOT NULL,
	`count` integer NOT NULL,
	`updated_at` integer NOT NULL,
	PRIMARY KEY(`subject`, `period`)
);
--> statement-breakpoint
CREATE TABLE `rate_windows` (
	`bucket` text PRIMARY KEY NOT NULL,
	`window_start` integer NOT NULL,
	`current` integer NOT NULL,
	`previous` integer NOT NULL
);

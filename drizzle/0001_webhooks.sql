CREATE TABLE `webhook_deliveries` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`endpoint_id` text NOT NULL,
	`change_seq` integer NOT NULL,
	`event_id` text NOT NULL,
	`msg_id` text NOT NULL,
	`event_type` text NOT NULL,
	`payload` text NOT NULL,
	`status` text DEFAULT 'pending' NOT NULL,
	`attempts` integer DEFAULT 0 NOT NULL,
	`next_attempt_at` integer NOT NULL,
	`last_attempt_at` integer,
	`last_status` integer,
	`last_error` text,
	`created_at` integer NOT NULL,
	`delivered_at` integer,
	FOREIGN KEY (`endpoint_id`) REFERENCES `webhook_endpoints`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `webhook_deliveries_msg_id_unique` ON `webhook_deliveries` (`msg_id`);--> statement-breakpoint
CREATE INDEX `webhook_deliveries_due_idx` ON `webhook_deliveries` (`status`,`next_attempt_at`);--> statement-breakpoint
CREATE INDEX `webhook_deliveries_endpoint_idx` ON `webhook_deliveries` (`endpoint_id`,`change_seq`);--> statement-breakpoint
CREATE TABLE `webhook_endpoints` (
	`id` text PRIMARY KEY NOT NULL,
	`key_id` text NOT NULL,
	`url` text NOT NULL,
	`secret` text NOT NULL,
	`types` text,
	`cities` text,
	`status` text DEFAULT 'active' NOT NULL,
	`disabled_reason` text,
	`disabled_at` integer,
	`created_at` integer NOT NULL,
	`last_success_at` integer,
	`last_failure_at` integer,
	`consecutive_failures` integer DEFAULT 0 NOT NULL,
	`failing_since` integer,
	`cursor_seq` integer DEFAULT 0 NOT NULL,
	FOREIGN KEY (`key_id`) REFERENCES `api_keys`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `webhook_endpoints_key_idx` ON `webhook_endpoints` (`key_id`);
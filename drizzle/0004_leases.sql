CREATE TABLE `leases` (
	`name` text PRIMARY KEY NOT NULL,
	`holder` text NOT NULL,
	`host` text NOT NULL,
	`pid` integer NOT NULL,
	`since` integer NOT NULL,
	`expires_at` integer NOT NULL
);

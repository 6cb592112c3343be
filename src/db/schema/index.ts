export * from './events.ts';
export * from './scans.ts';
export * from './limits.ts';
export * from './webhooks.ts';
export * from './leases.ts';

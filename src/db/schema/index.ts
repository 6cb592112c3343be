export * from './events.ts';
export * from './scans.ts';
export * from './limits.ts';

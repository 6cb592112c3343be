import type { Config } from '../config.ts';
import type { ScanSummary } from './scan.ts';
import type { SourceStatus } from './sources/source.ts';

/** Messages between the server's main thread and the scanner worker. */
export type ToWorker = { type: 'init'; config: Config } | { type: 'scan' } | { type: 'stop' };

export type FromWorker =
  | { type: 'ready'; statuses: SourceStatus[] }
  | { type: 'done'; summary: ScanSummary; statuses: SourceStatus[] }
  | { type: 'failed'; error: string; statuses: SourceStatus[] }
  | { type: 'init-failed'; error: string }
  | { type: 'stopped' };

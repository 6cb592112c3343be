import type { NormalizedItem, SourceName } from '../../domain/event.ts';

/** `[minLon, minLat, maxLon, maxLat]`, WGS84. */
export type BBox = [number, number, number, number];

export interface Cell {
  id: string;
  bbox: BBox;
}

export type CellFailureKind =
  | 'http' // non-2xx answer that is not a block/back-off signal
  | 'timeout' // no answer within the per-request timeout
  | 'parse' // HTML, truncated or otherwise malformed JSON
  | 'blocked' // the answer told us to back off (Waze 403/HTML, TomTom 403, HERE 429/503)
  | 'backoff' // the source is backing off: the cell was not even requested
  | 'network'; // connection refused, DNS, reset

export type CellResult =
  | { ok: true; items: NormalizedItem[]; requests: number }
  | { ok: false; kind: CellFailureKind; error: string; requests: number };

export interface SourceStatus {
  name: SourceName;
  state: 'ok' | 'backing_off';
  /** Epoch ms until which the source is backing off, null when not. */
  until: number | null;
  reason: string | null;
}

/**
 * One upstream, as the scanner sees it. A source owns its own request policy: how many cells it
 * fetches at once, the per-request timeout, one retry with jitter, and a source-wide back-off when
 * the upstream blocks or throttles us. It never throws for upstream trouble: it reports a failed
 * cell, so the scanner can keep that cell's events instead of clearing them.
 */
export interface Source {
  readonly name: SourceName;
  /** How many `fetchCell` calls the scanner may run at once for this source. */
  readonly concurrency: number;
  fetchCell(cell: Cell, signal?: AbortSignal): Promise<CellResult>;
  status(): SourceStatus;
}

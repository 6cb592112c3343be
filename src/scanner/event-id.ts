import type { SourceName } from '../domain/event.ts';

/** Stable across scans and restarts: the same upstream item always gets the same id. */
export function eventIdFor(source: SourceName, sourceId: string): string {
  const h = new Bun.CryptoHasher('sha256').update(`${source}:${sourceId}`).digest('hex');
  return `evt_${h.slice(0, 20)}`;
}

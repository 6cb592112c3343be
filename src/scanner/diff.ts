import type { JamDetails, NormalizedItem } from '../domain/event.ts';
import type { EventRow } from '../db/schema/index.ts';

/** Jam numbers move a little between scans; only moves past these count as an update. */
const SPEED_NOISE_KMH = 5;
const DELAY_NOISE_S = 60;
const RELATIVE_NOISE = 0.2;

function beyondNoise(a: number | null, b: number | null, absolute: number): boolean {
  if (a === null || b === null) return a !== b;
  const diff = Math.abs(a - b);
  return diff > absolute && diff > RELATIVE_NOISE * Math.max(Math.abs(a), Math.abs(b));
}

function jamChanged(a: JamDetails | null, b: JamDetails | null): boolean {
  if (a === null || b === null) return a !== b;
  return a.level !== b.level || beyondNoise(a.speed_kmh, b.speed_kmh, SPEED_NOISE_KMH) || beyondNoise(a.delay_s, b.delay_s, DELAY_NOISE_S);
}

/**
 * CONTRACT §2 "When an event is updated": a field a client would act on changed. Being seen
 * again, a moved point or a new confidence only refresh the row silently.
 */
export function materiallyChanged(row: EventRow, item: NormalizedItem): boolean {
  return (
    row.type !== item.type ||
    row.subtype !== item.subtype ||
    row.severity !== item.severity ||
    row.road !== item.road ||
    row.description !== item.description ||
    JSON.stringify(row.geometry ?? null) !== JSON.stringify(item.geometry) ||
    jamChanged(row.jam ?? null, item.jam)
  );
}

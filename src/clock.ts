/** The one source of "now" (epoch ms); tests pass a fake one. */
export type Clock = () => number;

export const systemClock: Clock = () => Date.now();

export function iso(ms: number): string {
  return new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/**
 * Epoch ms of an RFC 3339 timestamp whose shape the query schema already checked, or NaN when its
 * fields are out of range. Date.parse alone rolls impossible days over (2026-02-30 → March 2),
 * which would turn a typo into a silently different instant.
 */
export function parseRfc3339(s: string): number {
  const ms = Date.parse(s);
  const m = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})/.exec(s);
  if (Number.isNaN(ms) || m === null) return NaN;
  const [y, mo, d, h, mi, sec] = m.slice(1).map(Number) as [number, number, number, number, number, number];
  const day = new Date(0);
  day.setUTCFullYear(y, mo - 1, d); // not Date.UTC, which reads years 0–99 as 1900–1999
  if (day.getUTCFullYear() !== y || day.getUTCMonth() !== mo - 1 || day.getUTCDate() !== d) return NaN;
  return h <= 23 && mi <= 59 && sec <= 59 ? ms : NaN;
}

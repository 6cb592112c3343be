/**
 * Calendar months in a time zone (Europe/Istanbul for the monthly quota, CONTRACT §4): the period
 * key `YYYY-MM` and its start and end instants. Computed once per period, never per request.
 */

export const QUOTA_TIME_ZONE = 'Europe/Istanbul';

export interface MonthPeriod {
  /** `YYYY-MM` in the zone. */
  key: string;
  /** First instant of the month in the zone (epoch ms). */
  start: number;
  /** First instant of the next month (epoch ms): X-Quota-Reset. */
  end: number;
}

const formatters = new Map<string, Intl.DateTimeFormat>();

function formatter(timeZone: string): Intl.DateTimeFormat {
  let f = formatters.get(timeZone);
  if (f === undefined) {
    f = new Intl.DateTimeFormat('en-US', {
      timeZone,
      hourCycle: 'h23',
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
    });
    formatters.set(timeZone, f);
  }
  return f;
}

function wallClock(ms: number, timeZone: string): { year: number; month: number; day: number; hour: number; minute: number; second: number } {
  const parts: Record<string, number> = {};
  for (const p of formatter(timeZone).formatToParts(ms)) if (p.type !== 'literal') parts[p.type] = Number(p.value);
  return { year: parts.year!, month: parts.month!, day: parts.day!, hour: parts.hour!, minute: parts.minute!, second: parts.second! };
}

/** Zone offset at an instant, in ms (UTC+3 → 10,800,000). */
function offsetAt(ms: number, timeZone: string): number {
  const w = wallClock(ms, timeZone);
  const asUtc = Date.UTC(w.year, w.month - 1, w.day, w.hour, w.minute, w.second);
  return asUtc - (ms - (((ms % 1000) + 1000) % 1000));
}

/** The instant at which the zone's wall clock reads midnight on the 1st of `month` (1–12, may overflow). */
function monthStart(year: number, month: number, timeZone: string): number {
  const guess = Date.UTC(year, month - 1, 1);
  let t = guess - offsetAt(guess, timeZone);
  const again = guess - offsetAt(t, timeZone);
  if (again !== t) t = again;
  return t;
}

export function monthOf(ms: number, timeZone: string = QUOTA_TIME_ZONE): MonthPeriod {
  const { year, month } = wallClock(ms, timeZone);
  return { key: `${year}-${String(month).padStart(2, '0')}`, start: monthStart(year, month, timeZone), end: monthStart(year, month + 1, timeZone) };
}

/** The Europe/Istanbul calendar month containing `ms`. */
export function istanbulMonth(ms: number): MonthPeriod {
  return monthOf(ms, QUOTA_TIME_ZONE);
}

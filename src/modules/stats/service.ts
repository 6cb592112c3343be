import type { Database } from 'bun:sqlite';
import { iso, parseRfc3339 } from '../../clock.ts';
import { historyStats } from '../../history/history.ts';
import { ApiError, invalidParams, type InvalidParam } from '../../http/problems.ts';
import { provinceByPlate } from '../../provinces/index.ts';
import { PreparedBody } from '../../read-model/prepared-body.ts';
import type { PreparedPage, ReadModel } from '../../read-model/read-model.ts';

const DAY_MS = 24 * 60 * 60 * 1000;

/** Parses an Enterprise stats range; null when neither from nor to was given. */
export function parseStatsRange(
  raw: { from?: string; to?: string },
  opts: { now: number; enterprise: boolean; historyDays: number },
): { from: number; to: number } | null {
  if (raw.from === undefined && raw.to === undefined) return null;
  if (!opts.enterprise) {
    throw new ApiError('plan_required', 'Statistics over a from/to range read history, which belongs to the Enterprise plan; the Free plan covers the last 24 hours.', { feature: 'history' });
  }
  const bad: InvalidParam[] = [];
  const from = raw.from === undefined ? opts.now - DAY_MS : parseRfc3339(raw.from);
  const to = raw.to === undefined ? opts.now : parseRfc3339(raw.to);
  if (Number.isNaN(from)) bad.push({ name: 'from', reason: 'is not a valid date and time' });
  if (Number.isNaN(to)) bad.push({ name: 'to', reason: 'is not a valid date and time' });
  if (bad.length === 0) {
    if (from > to) bad.push({ name: 'from', reason: 'must not be after to' });
    if (from < opts.now - opts.historyDays * DAY_MS) bad.push({ name: 'from', reason: `reaches past the ${opts.historyDays} days of history kept` });
    if (to > opts.now + 60_000) bad.push({ name: 'to', reason: 'is in the future' });
  }
  if (bad.length > 0) throw invalidParams(bad);
  return { from, to };
}

/** Stats over events seen in [from, to], from SQLite, in the shape of the 24-hour stats plus `range`. */
export function rangeStatsPage(db: Database, readModel: ReadModel, range: { from: number; to: number }, top: number, now: number): PreparedPage {
  const h = historyStats(db, range.from, range.to);
  const dataUpdatedAt = readModel.dataUpdatedAt;
  const body = {
    generated_at: iso(now),
    data_updated_at: dataUpdatedAt === null ? null : iso(dataUpdatedAt),
    window_hours: 24,
    total: h.total,
    by_type: h.by_type,
    by_severity: h.by_severity,
    top_cities: h.by_plate.slice(0, top).flatMap((c) => {
      const p = provinceByPlate(c.plate);
      return p ? [{ city: { slug: p.slug, name: p.name, plate: p.plate }, count: c.count, by_type: c.by_type }] : [];
    }),
    last_24h: readModel.last24h,
    range: { from: iso(range.from), to: iso(range.to), created: h.created, cleared: h.cleared },
  };
  return { body: new PreparedBody(JSON.stringify(body)), lastModified: dataUpdatedAt ?? now, contentType: 'application/json; charset=utf-8' };
}

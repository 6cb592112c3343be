import { iso, type Clock } from '../clock.ts';
import { type EventType, type Severity, type TrafficEvent, type CityRef } from '../domain/event.ts';
import type { EventRow } from '../db/schema/index.ts';
import { provinceByPlate } from '../provinces/index.ts';
import { toApiEvent, toFeature } from './event-json.ts';
import { PreparedBody } from './prepared-body.ts';
import { renderList } from './render.ts';
import { haversineKm, type ListQuery } from './query.ts';

export const WINDOW_MS = 24 * 60 * 60 * 1000;
const PAGE_CACHE_MAX = 512;

/** What the read model needs from storage, for one rebuild. */
export interface WindowData {
  /** Events active and seen since `since`, and events cleared since `since`. */
  rows: EventRow[];
  /** Finish time of the last successful scan; null before the first. */
  dataUpdatedAt: number | null;
}

export type LoadWindow = (since: number) => WindowData;

interface Entry {
  ev: TrafficEvent;
  json: string;
  feature: string | undefined;
  id: string;
  reported: number;
  updated: number;
  plate: number;
  type: EventType;
  severity: Severity;
  active: boolean;
  lat: number;
  lon: number;
}

export type TypeCounts = Record<EventType, number>;

export interface StatsBody {
  generated_at: string;
  data_updated_at: string | null;
  window_hours: number;
  total: number;
  by_type: TypeCounts;
  by_severity: Record<Severity, number>;
  top_cities: { city: CityRef; count: number; by_type: TypeCounts }[];
  last_24h: { created: number; cleared: number };
}

interface Snapshot {
  version: number;
  builtAt: number;
  dataUpdatedAt: number | null;
  /** Active and recently cleared, newest `reported_at` first, ties by id. */
  entries: Entry[];
  activeCount: number;
  stats: Omit<StatsBody, 'top_cities'> & { cities: StatsBody['top_cities'] };
}

export interface PreparedPage {
  body: PreparedBody;
  /** Epoch ms for `Last-Modified`. */
  lastModified: number;
  contentType: string;
}

export interface PageRequest {
  /** Path the links are built on, e.g. `/api/v1/events/istanbul`. */
  path: string;
  /** The validated query parameters as the client sent them (cursor excluded or not). */
  params: URLSearchParams;
  query: ListQuery;
  city: CityRef | null;
}

function zeroTypes(): TypeCounts {
  return { accident: 0, jam: 0, hazard: 0, road_closure: 0 };
}

/**
 * The 24-hour picture the list and stats endpoints serve, rebuilt from SQLite when the data
 * changes (after each scan commit) instead of queried per request. Pages are serialized once
 * per snapshot and kept as prepared bodies.
 */
export class ReadModel {
  private snap: Snapshot;
  private pages = new Map<string, PreparedPage>();

  constructor(
    private readonly load: LoadWindow,
    private readonly clock: Clock,
    readonly updateIntervalSeconds: number,
  ) {
    this.snap = this.build(0);
  }

  get version(): number {
    return this.snap.version;
  }
  get builtAt(): number {
    return this.snap.builtAt;
  }
  get activeCount(): number {
    return this.snap.activeCount;
  }
  get dataUpdatedAt(): number | null {
    return this.snap.dataUpdatedAt;
  }
  /** Events first seen / cleared in the last 24 hours, as of the last rebuild. */
  get last24h(): { created: number; cleared: number } {
    return this.snap.stats.last_24h;
  }

  /** Rebuilds from storage. Cheap enough to run after every scan and once a minute. */
  refresh(): void {
    const next = this.build(this.snap.version + 1);
    this.snap = next;
    this.pages = new Map();
  }

  private build(version: number): Snapshot {
    const now = this.clock();
    const since = now - WINDOW_MS;
    const { rows, dataUpdatedAt } = this.load(since);
    const entries: Entry[] = [];
    const byType = zeroTypes();
    const bySeverity: Record<Severity, number> = { minor: 0, moderate: 0, major: 0, unknown: 0 };
    const perCity = new Map<number, { count: number; by_type: TypeCounts }>();
    let created = 0;
    let cleared = 0;
    let active = 0;
    for (const row of rows) {
      const isActive = row.status === 'active' && row.lastSeenAt >= since;
      const isRecentlyCleared = row.status === 'cleared' && row.clearedAt !== null && row.clearedAt >= since;
      if (!isActive && !isRecentlyCleared) continue;
      if (row.firstSeenAt >= since) created++;
      if (isRecentlyCleared) cleared++;
      const ev = toApiEvent(row);
      entries.push({
        ev,
        json: JSON.stringify(ev),
        feature: undefined,
        id: row.id,
        reported: row.reportedAt,
        // updated_since must include events cleared since then (CONTRACT §2) even if the writer
        // left updated_at at the last field change.
        updated: Math.max(row.updatedAt, row.clearedAt ?? row.updatedAt),
        plate: row.plate,
        type: row.type,
        severity: row.severity,
        active: isActive,
        lat: row.lat,
        lon: row.lon,
      });
      if (!isActive) continue;
      active++;
      byType[row.type]++;
      bySeverity[row.severity]++;
      let c = perCity.get(row.plate);
      if (c === undefined) perCity.set(row.plate, (c = { count: 0, by_type: zeroTypes() }));
      c.count++;
      c.by_type[row.type]++;
    }
    entries.sort((a, b) => b.reported - a.reported || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
    const cities = [...perCity.entries()]
      .map(([plate, c]) => ({ plate, ...c }))
      .sort((a, b) => b.count - a.count || a.plate - b.plate)
      .flatMap((c) => {
        const p = provinceByPlate(c.plate);
        return p ? [{ city: { slug: p.slug, name: p.name, plate: p.plate }, count: c.count, by_type: c.by_type }] : [];
      });
    return {
      version,
      builtAt: now,
      dataUpdatedAt,
      entries,
      activeCount: active,
      stats: {
        generated_at: iso(now),
        data_updated_at: dataUpdatedAt === null ? null : iso(dataUpdatedAt),
        window_hours: 24,
        total: active,
        by_type: byType,
        by_severity: bySeverity,
        cities,
        last_24h: { created, cleared },
      },
    };
  }

  private lastModified(): number {
    return this.snap.dataUpdatedAt ?? this.snap.builtAt;
  }

  private cached(key: string, make: () => PreparedPage): PreparedPage {
    const hit = this.pages.get(key);
    if (hit !== undefined) return hit;
    const page = make();
    if (this.pages.size >= PAGE_CACHE_MAX) {
      // Maps iterate in insertion order: dropping the oldest keeps the hot default pages, which
      // are requested (and so re-inserted) first after every rebuild.
      const oldest = this.pages.keys().next().value;
      if (oldest !== undefined) this.pages.delete(oldest);
    }
    this.pages.set(key, page);
    return page;
  }

  statsPage(top: number): PreparedPage {
    return this.cached(`stats|${top}`, () => {
      const { cities, ...rest } = this.snap.stats;
      const body: StatsBody = { ...rest, top_cities: cities.slice(0, top) };
      // Keep the contract's key order: top_cities before last_24h.
      const ordered = {
        generated_at: body.generated_at,
        data_updated_at: body.data_updated_at,
        window_hours: body.window_hours,
        total: body.total,
        by_type: body.by_type,
        by_severity: body.by_severity,
        top_cities: body.top_cities,
        last_24h: body.last_24h,
      };
      return { body: new PreparedBody(JSON.stringify(ordered)), lastModified: this.lastModified(), contentType: 'application/json; charset=utf-8' };
    });
  }

  listPage(req: PageRequest): PreparedPage {
    const sorted = [...req.params].filter(([k]) => k !== 'format').sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    const key = `${req.query.format}|${req.path}?${new URLSearchParams(sorted).toString()}`;
    return this.cached(key, () => this.buildList(req, sorted));
  }

  private buildList(req: PageRequest, sortedParams: [string, string][]): PreparedPage {
    const q = req.query;
    const match = matcher(q);
    const entries = this.snap.entries;
    let start = 0;
    if (q.cursor !== null) {
      const c = q.cursor;
      // First index strictly after the cursor in (reported desc, id asc) order.
      let lo = 0;
      let hi = entries.length;
      while (lo < hi) {
        const mid = (lo + hi) >>> 1;
        const e = entries[mid]!;
        const after = e.reported < c.reportedAt || (e.reported === c.reportedAt && e.id > c.id);
        if (after) hi = mid;
        else lo = mid + 1;
      }
      start = lo;
    }
    let total = 0;
    const page: Entry[] = [];
    let hasMore = false;
    for (let i = 0; i < entries.length; i++) {
      const e = entries[i]!;
      if (!match(e)) continue;
      total++;
      if (i < start) continue;
      if (page.length < q.limit) page.push(e);
      else hasMore = true;
    }
    const last = page[page.length - 1];
    const { body, contentType } = renderList({
      events: page.map((e) => ({ json: e.json, feature: () => (e.feature ??= JSON.stringify(toFeature(e.ev))) })),
      limit: q.limit,
      total,
      next: hasMore && last !== undefined ? { reportedAt: last.reported, id: last.id } : null,
      format: q.format,
      path: req.path,
      sortedParams,
      city: req.city,
      generatedAt: this.snap.builtAt,
      dataUpdatedAt: this.snap.dataUpdatedAt,
      updateIntervalSeconds: this.updateIntervalSeconds,
    });
    return { body, lastModified: this.lastModified(), contentType };
  }
}

function matcher(q: ListQuery): (e: Entry) => boolean {
  const { plate, types, severities, bbox, near, updatedSince } = q;
  return (e) => {
    if (updatedSince === null ? !e.active : e.updated < updatedSince) return false;
    if (plate !== null && e.plate !== plate) return false;
    if (types !== null && !types.has(e.type)) return false;
    if (severities !== null && !severities.has(e.severity)) return false;
    if (bbox !== null && (e.lon < bbox[0] || e.lat < bbox[1] || e.lon > bbox[2] || e.lat > bbox[3])) return false;
    if (near !== null && haversineKm(near.lat, near.lon, e.lat, e.lon) > near.radiusKm) return false;
    return true;
  };
}


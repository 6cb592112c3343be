import { iso, type Clock } from '../clock.ts';
import type { CityRef, EventType, Severity } from '../domain/event.ts';
import { provinceByPlate } from '../provinces/index.ts';
import { toApiEvent } from './event-json.ts';
import type { EventHead, WindowSource } from './load-window.ts';
import { PreparedBody } from './prepared-body.ts';
import { haversineKm, type ListQuery } from './query.ts';
import { renderList } from './render.ts';

export const WINDOW_MS = 24 * 60 * 60 * 1000;
/** Rows read per step of a rebuild; each step is a few milliseconds of main-thread work. */
const HEAD_CHUNK = 250;
const ROW_CHUNK = 125;
const COPY_CHUNK = 500;
/** Cached pages are bounded by count and by bytes, whatever the queries. */
const PAGE_CACHE_MAX = 512;
const PAGE_CACHE_BYTES = 24 * 1024 * 1024;

const LAST_SEEN_KEY = '"last_seen_at":"';
/** `iso()` always writes `YYYY-MM-DDTHH:MM:SSZ`: 20 ASCII bytes, so it can be patched in place. */
const ISO_LENGTH = 20;

/**
 * One event of the snapshot. Its serialized JSON lives in the snapshot's byte arena at
 * `off`/`len`; `ls` is where its last_seen_at timestamp starts inside those bytes.
 */
interface Entry {
  id: string;
  rev: number;
  reported: number;
  updated: number;
  lastSeen: number;
  firstSeen: number;
  plate: number;
  type: EventType;
  severity: Severity;
  active: boolean;
  lat: number;
  lon: number;
  off: number;
  len: number;
  ls: number;
  /** GeoJSON geometry of the Feature form: the event's line, else null (its point is used). */
  geometry: string | null;
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
  arena: Uint8Array;
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
  /** The raw query string as the client sent it: with the path and format, the page's cache key. */
  rawQuery: string;
  /** The validated parameters for the `next` link, built only when the page is not cached. */
  params: () => URLSearchParams;
  query: ListQuery;
  city: CityRef | null;
}

function zeroTypes(): TypeCounts {
  return { accident: 0, jam: 0, hazard: 0, road_closure: 0 };
}

const encoder = new TextEncoder();

const EMPTY: Snapshot = {
  version: -1,
  builtAt: 0,
  dataUpdatedAt: null,
  entries: [],
  arena: new Uint8Array(0),
  activeCount: 0,
  stats: {
    generated_at: iso(0),
    data_updated_at: null,
    window_hours: 24,
    total: 0,
    by_type: zeroTypes(),
    by_severity: { minor: 0, moderate: 0, major: 0, unknown: 0 },
    cities: [],
    last_24h: { created: 0, cleared: 0 },
  },
};

/**
 * The 24-hour picture the list and stats endpoints serve, rebuilt from SQLite after each scan
 * commit instead of queried per request. A rebuild re-serializes only the events whose `rev`
 * moved; an event that was merely seen again keeps its bytes with last_seen_at patched in place.
 * The JSON of all events lives in one UTF-8 arena per snapshot (a JS string per event would be
 * UTF-16 for any Turkish letter, and an object per event dominated the heap). Pages are built
 * once per snapshot and kept as prepared bodies, within a byte budget.
 */
export class ReadModel {
  private snap: Snapshot = EMPTY;
  private pages = new Map<string, PreparedPage>();
  private pageBytes = 0;
  private rebuilding: Promise<void> | null = null;
  private queued: Promise<void> | null = null;

  constructor(
    private readonly source: WindowSource,
    private readonly clock: Clock,
    readonly updateIntervalSeconds: number,
  ) {
    this.refresh();
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

  /** Rebuilds in one go (start-up, tests). */
  refresh(): void {
    const steps = this.build();
    let r = steps.next();
    while (!r.done) r = steps.next();
    this.install(r.value);
  }

  /**
   * Rebuilds in steps of a few milliseconds, giving the event loop a turn between them; requests
   * keep being served from the previous snapshot until the new one is swapped in whole.
   */
  refreshAsync(pause: () => Promise<void>): Promise<void> {
    // A rebuild already under way may have read the data before the change the caller knows
    // about: queue exactly one more after it, shared by everyone who asks meanwhile.
    if (this.rebuilding !== null) {
      this.queued ??= this.rebuilding.then(() => {
        this.queued = null;
        return this.refreshAsync(pause);
      });
      return this.queued;
    }
    this.rebuilding = (async () => {
      try {
        const steps = this.build();
        let r = steps.next();
        while (!r.done) {
          await pause();
          r = steps.next();
        }
        this.install(r.value);
      } finally {
        this.rebuilding = null;
      }
    })();
    return this.rebuilding;
  }

  private install(next: Snapshot): void {
    this.snap = next;
    this.pages = new Map();
    this.pageBytes = 0;
  }

  private *build(): Generator<void, Snapshot, void> {
    const prev = this.snap;
    // Built per rebuild rather than kept: a Map of 50k entries would live as long as the snapshot.
    const prevById = new Map<string, Entry>();
    for (let i = 0; i < prev.entries.length; i++) {
      const e = prev.entries[i]!;
      prevById.set(e.id, e);
      if (i % COPY_CHUNK === COPY_CHUNK - 1) yield;
    }
    const now = this.clock();
    const since = now - WINDOW_MS;
    const dataUpdatedAt = this.source.dataUpdatedAt();
    // Reused entries keep the previous snapshot's order; only the re-serialized ones are sorted,
    // then the two are merged — a full sort of 50k entries was one of the longest steps.
    const reusedByOld = new Map<Entry, Entry>();
    const freshEntries: Entry[] = [];
    // Bytes for each entry: reused from the previous arena, or freshly serialized.
    const fresh = new Map<Entry, Uint8Array>();
    const reuse = new Map<Entry, Entry>();
    const stale: string[] = [];
    const pendingById = new Map<string, { head: EventHead; active: boolean }>();
    // Heads are read in steps, so a scan may commit between the active and the cleared ones: an
    // event can then show up twice. The later read is the newer state, so it wins.
    const heads = new Map<string, { head: EventHead; active: boolean }>();
    for (const chunk of this.source.heads(since, HEAD_CHUNK)) {
      for (const h of chunk) {
        const active = h.status === 'active' && h.lastSeenAt >= since;
        if (!active && !(h.status === 'cleared' && h.clearedAt !== null && h.clearedAt >= since)) {
          heads.delete(h.id);
          continue;
        }
        heads.set(h.id, { head: h, active });
      }
      yield;
    }
    let n = 0;
    for (const [id, { head: h, active }] of heads) {
      const old = prevById.get(id);
      if (old !== undefined && old.rev === h.rev) {
        const e = entryOf(h, active, old.len, old.ls, old.geometry);
        reusedByOld.set(old, e);
        reuse.set(e, old);
      } else {
        stale.push(id);
        pendingById.set(id, { head: h, active });
      }
      if (++n % COPY_CHUNK === 0) yield;
    }
    for (let i = 0; i < stale.length; i += ROW_CHUNK) {
      for (const row of this.source.rows(stale.slice(i, i + ROW_CHUNK))) {
        const pending = pendingById.get(row.id);
        if (pending === undefined) continue;
        const ev = toApiEvent(row);
        const json = JSON.stringify(ev);
        const at = json.indexOf(LAST_SEEN_KEY) + LAST_SEEN_KEY.length;
        const bytes = encoder.encode(json);
        const ls = Buffer.byteLength(json.slice(0, at));
        // The row may have moved since its head was read (a scan in between): trust the row.
        const e = entryOf({ ...pending.head, rev: row.rev, lastSeenAt: row.lastSeenAt }, pending.active, bytes.byteLength, ls, ev.geometry === null ? null : JSON.stringify(ev.geometry));
        freshEntries.push(e);
        fresh.set(e, bytes);
      }
      yield;
    }

    const kept: Entry[] = [];
    for (let i = 0; i < prev.entries.length; i++) {
      const e = reusedByOld.get(prev.entries[i]!);
      if (e !== undefined) kept.push(e);
      if (i % COPY_CHUNK === COPY_CHUNK - 1) yield;
    }
    freshEntries.sort(byListOrder);
    const entries: Entry[] = new Array(kept.length + freshEntries.length);
    for (let i = 0, a = 0, b = 0; i < entries.length; i++) {
      entries[i] = b >= freshEntries.length || (a < kept.length && byListOrder(kept[a]!, freshEntries[b]!) <= 0) ? kept[a++]! : freshEntries[b++]!;
      if (i % COPY_CHUNK === COPY_CHUNK - 1) yield;
    }
    let size = 0;
    for (const e of entries) {
      e.off = size;
      size += e.len;
    }
    const arena = new Uint8Array(size);
    for (let i = 0; i < entries.length; i++) {
      const e = entries[i]!;
      const old = reuse.get(e);
      if (old !== undefined) {
        arena.set(prev.arena.subarray(old.off, old.off + old.len), e.off);
        if (e.lastSeen !== old.lastSeen) encoder.encodeInto(iso(e.lastSeen), arena.subarray(e.off + e.ls, e.off + e.ls + ISO_LENGTH));
      } else arena.set(fresh.get(e)!, e.off);
      if (i % COPY_CHUNK === COPY_CHUNK - 1) yield;
    }
    yield;
    return summarize(this.snap.version + 1, now, since, dataUpdatedAt, entries, arena);
  }

  private lastModified(): number {
    return this.snap.dataUpdatedAt ?? this.snap.builtAt;
  }

  private cached(key: string, make: () => PreparedPage): PreparedPage {
    const hit = this.pages.get(key);
    if (hit !== undefined) return hit;
    const page = make();
    // Maps iterate in insertion order: dropping the oldest keeps the hot default pages, which are
    // requested (and so re-inserted) first after every rebuild.
    while (this.pages.size > 0 && (this.pages.size >= PAGE_CACHE_MAX || this.pageBytes + page.body.size > PAGE_CACHE_BYTES)) {
      const [oldestKey, oldest] = this.pages.entries().next().value!;
      this.pages.delete(oldestKey);
      this.pageBytes -= oldest.body.size;
    }
    this.pages.set(key, page);
    this.pageBytes += page.body.size;
    return page;
  }

  statsPage(top: number): PreparedPage {
    return this.cached(`stats|${top}`, () => {
      const { cities, ...rest } = this.snap.stats;
      // The contract's key order: top_cities before last_24h.
      const body: StatsBody = {
        generated_at: rest.generated_at,
        data_updated_at: rest.data_updated_at,
        window_hours: rest.window_hours,
        total: rest.total,
        by_type: rest.by_type,
        by_severity: rest.by_severity,
        top_cities: cities.slice(0, top),
        last_24h: rest.last_24h,
      };
      return { body: new PreparedBody(JSON.stringify(body)), lastModified: this.lastModified(), contentType: 'application/json; charset=utf-8' };
    });
  }

  listPage(req: PageRequest): PreparedPage {
    // Keyed by the query string as sent: the same page asked for again costs a Map lookup, not a
    // parse. Two spellings of one query are two entries with identical bytes and ETag.
    return this.cached(`${req.query.format}|${req.path}?${req.rawQuery}`, () =>
      this.buildList(req, sortedParams(req.params())),
    );
  }

  private buildList(req: PageRequest, sortedParams: [string, string][]): PreparedPage {
    const q = req.query;
    const match = matcher(q);
    const snap = this.snap;
    const entries = snap.entries;
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
      events: page.map((e) => ({
        id: e.id,
        json: snap.arena.subarray(e.off, e.off + e.len),
        geometry: e.geometry ?? `{"type":"Point","coordinates":[${e.lon},${e.lat}]}`,
      })),
      limit: q.limit,
      total,
      next: hasMore && last !== undefined ? { reportedAt: last.reported, id: last.id } : null,
      format: q.format,
      path: req.path,
      sortedParams,
      city: req.city,
      generatedAt: snap.builtAt,
      dataUpdatedAt: snap.dataUpdatedAt,
      updateIntervalSeconds: this.updateIntervalSeconds,
    });
    return { body, lastModified: this.lastModified(), contentType };
  }
}

// SQLite hands back a new string per row; 50k copies of 'accident' are worth folding.
const TYPES: Record<string, EventType> = { accident: 'accident', jam: 'jam', hazard: 'hazard', road_closure: 'road_closure' };
const SEVERITIES: Record<string, Severity> = { minor: 'minor', moderate: 'moderate', major: 'major', unknown: 'unknown' };

/** List order: newest reported_at first, ties by id. */
function byListOrder(a: Entry, b: Entry): number {
  return b.reported - a.reported || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
}

/** The parameters in a stable order, for `next` links that do not depend on how a client ordered them. */
export function sortedParams(params: URLSearchParams): [string, string][] {
  return [...params].filter(([k]) => k !== 'format').sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
}

function entryOf(h: EventHead, active: boolean, len: number, ls: number, geometry: string | null): Entry {
  return {
    id: h.id,
    rev: h.rev,
    reported: h.reportedAt,
    // updated_since must include events cleared since then (CONTRACT §2) even if a writer left
    // updated_at at the last field change.
    updated: Math.max(h.updatedAt, h.clearedAt ?? h.updatedAt),
    lastSeen: h.lastSeenAt,
    firstSeen: h.firstSeenAt,
    plate: h.plate,
    type: TYPES[h.type] ?? h.type,
    severity: SEVERITIES[h.severity] ?? h.severity,
    active,
    lat: h.lat,
    lon: h.lon,
    off: 0,
    len,
    ls,
    geometry,
  };
}

function summarize(version: number, now: number, since: number, dataUpdatedAt: number | null, entries: Entry[], arena: Uint8Array): Snapshot {
  const byType = zeroTypes();
  const bySeverity: Record<Severity, number> = { minor: 0, moderate: 0, major: 0, unknown: 0 };
  const perCity = new Map<number, { count: number; by_type: TypeCounts }>();
  let active = 0;
  let cleared = 0;
  let created = 0;
  for (const e of entries) {
    if (e.firstSeen >= since) created++;
    if (!e.active) {
      cleared++;
      continue;
    }
    active++;
    byType[e.type]++;
    bySeverity[e.severity]++;
    let c = perCity.get(e.plate);
    if (c === undefined) perCity.set(e.plate, (c = { count: 0, by_type: zeroTypes() }));
    c.count++;
    c.by_type[e.type]++;
  }
  const cities = [...perCity.entries()]
    .sort(([pa, a], [pb, b]) => b.count - a.count || pa - pb)
    .flatMap(([plate, c]) => {
      const p = provinceByPlate(plate);
      return p ? [{ city: { slug: p.slug, name: p.name, plate: p.plate }, count: c.count, by_type: c.by_type }] : [];
    });
  return {
    version,
    builtAt: now,
    dataUpdatedAt,
    entries,
    arena,
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

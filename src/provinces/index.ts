/**
 * The 81 provinces (il) of Türkiye: lookup by plate/slug, forgiving name resolution and point → province.
 * Rules and data sources: /work/shared/notes/PROVINCES.md (§2 name folding, §3.4 point lookup) and README.md here.
 * Framework-free and dependency-free; the data is bundled through JSON imports so it also works inside
 * a `bun build --compile` binary.
 */
import rawProvinces from './provinces.json' with { type: 'json' };
import rawBoundaries from './boundaries.json' with { type: 'json' };

export type BBox = readonly [minLon: number, minLat: number, maxLon: number, maxLat: number];

export interface Province {
  plate: number;
  /** Official Turkish spelling, for display ("Şanlıurfa"). */
  name: string;
  /** URL-safe key, [a-z] only ("sanliurfa"). */
  slug: string;
  ascii: string;
  aliases: readonly string[];
  /** Centre of the province capital (not the polygon centroid). */
  lat: number;
  lon: number;
  /** One of the 7 geographic regions, in Turkish ("Marmara", "İç Anadolu", …). */
  region: string;
  /** `[minLon, minLat, maxLon, maxLat]` of the province polygon, rounded outward to 0.001°. */
  bbox: BBox;
}

/** CC BY-IGO requires this wherever the boundary data ships (API docs, NOTICE); see README.md. */
export const BOUNDARY_ATTRIBUTION =
  'Türkiye – Subnational Administrative Boundaries (COD-AB, cod-ab-tur, admin level 1, valid on 2022-01-01), ' +
  'source: General Directorate of Mapping (Harita Genel Müdürlüğü), published by UN OCHA on the Humanitarian Data Exchange, ' +
  'https://data.humdata.org/dataset/cod-ab-tur , licence CC BY-IGO. Simplified (mapshaper) by ddgond/guata.me ' +
  'and by this project; modified.';

// ---------------------------------------------------------------------------------------------
// Data

function toBBox(v: readonly number[], what: string): BBox {
  const [a, b, c, d] = v;
  if (v.length !== 4 || a === undefined || b === undefined || c === undefined || d === undefined) {
    throw new Error(`${what}: bbox must have 4 numbers`);
  }
  return Object.freeze([a, b, c, d] as const);
}

export const PROVINCES: readonly Province[] = Object.freeze(
  rawProvinces
    .map(
      (p): Province =>
        Object.freeze({
          plate: p.plate,
          name: p.name,
          slug: p.slug,
          ascii: p.ascii,
          aliases: Object.freeze([...p.aliases]),
          lat: p.lat,
          lon: p.lon,
          region: p.region,
          bbox: toBBox(p.bbox, `province ${p.plate}`),
        }),
    )
    .sort((a, b) => a.plate - b.plate),
);

// Plates are 1..81 with no gaps, so an array indexed by plate is the whole lookup table.
const BY_PLATE: readonly (Province | undefined)[] = (() => {
  const t: (Province | undefined)[] = new Array<Province | undefined>(82).fill(undefined);
  for (const p of PROVINCES) t[p.plate] = p;
  return t;
})();

const BY_SLUG: ReadonlyMap<string, Province> = new Map(PROVINCES.map((p) => [p.slug, p]));

export function provinceByPlate(plate: number): Province | undefined {
  return Number.isInteger(plate) ? BY_PLATE[plate] : undefined;
}

export function provinceBySlug(slug: string): Province | undefined {
  return BY_SLUG.get(slug);
}

// ---------------------------------------------------------------------------------------------
// Name folding and resolution (PROVINCES.md §2)

const APOSTROPHES = /['’‘`´]/;
const MARKS = /\p{M}+/gu;
const NON_ALNUM = /[^a-z0-9]+/;
const NOISE = new Set([
  'il',
  'ili',
  'province',
  'city',
  'sehir',
  'sehri',
  'buyuksehir',
  'belediyesi',
  'valiligi',
  'turkey',
  'turkiye',
]);

/** §2 steps 1–5: everything up to, but not including, the punctuation/noise-word step. */
function foldLetters(input: string): string {
  let s = input.normalize('NFC').trim();
  const cut = s.search(APOSTROPHES);
  if (cut >= 0) s = s.slice(0, cut);
  // İ/I/ı must become i before lowercasing: toLowerCase() turns İ into i + U+0307, and ı has no
  // decomposition, so neither would reach plain "i" otherwise.
  s = s.replace(/[İIı]/g, 'i');
  return s.toLowerCase().normalize('NFD').replace(MARKS, '');
}

function foldTokens(letters: string): string[] {
  return letters.split(NON_ALNUM).filter((t) => t.length > 0 && !NOISE.has(t));
}

/**
 * Locale-independent lookup key for a city name (PROVINCES.md §2 steps 1–6):
 * "İstanbul'da" → "istanbul", "K. Maraş" → "kmaras", "afyon-karahisar" → "afyonkarahisar".
 */
export function foldCityKey(input: string): string {
  return foldTokens(foldLetters(input)).join('');
}

const KEY_TO_PROVINCE: ReadonlyMap<string, Province> = (() => {
  const m = new Map<string, Province>();
  for (const p of PROVINCES) {
    for (const label of [p.name, p.ascii, p.slug, ...p.aliases]) {
      const key = foldCityKey(label);
      const prev = m.get(key);
      // A shared key would make resolveCity silently depend on data order; fail loudly at load instead.
      if (prev && prev.plate !== p.plate) {
        throw new Error(`city key "${key}" maps to both ${prev.name} and ${p.name}`);
      }
      if (key) m.set(key, p);
    }
  }
  return m;
})();

// Keys grouped per province, so suggestions rank each province once by its closest label.
const KEYS_BY_PROVINCE: readonly (readonly [Province, readonly string[]])[] = PROVINCES.map((p) => [
  p,
  [...KEY_TO_PROVINCE].filter(([, q]) => q === p).map(([k]) => k),
]);

// Separators are limited to one of " -_." so "3.4" or "1 2" are not read as plates 34 and 12.
const PLATE_RE = /^(?:tr[\s\-_.]?)?0*(\d{1,2})$/;

const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;

/** Inputs longer than this cannot be a province name and are not worth folding. */
const MAX_INPUT = 256;

/** Percent-decodes a string that has escapes, once; a malformed escape leaves it as it is. */
export function decodeIfEncoded(input: string): string {
  if (!input.includes('%')) return input;
  try {
    return decodeURIComponent(input);
  } catch {
    // Malformed escapes ("%E0%A4%A", a literal "%"): use the text as it is.
    return input;
  }
}

/**
 * Resolves a user-supplied city: official name, ASCII spelling, alias, plate code ("34", "06", "TR-34")
 * in any case, Unicode form or percent-encoding, with Turkish apostrophe suffixes ("İzmir'de").
 * Exact match on the folded key only — "Kar" or "Merkez" never resolve. Never throws.
 */
export function resolveCity(input: string): Province | null {
  if (typeof input !== 'string' || input.length === 0 || input.length > MAX_INPUT * 3) return null;
  const decoded = decodeIfEncoded(input);
  // Punctuation folds away ("K. Maraş") and surrounding whitespace trims; a control character
  // anywhere else ("istanbul%00", "ist\tanbul") is no spelling.
  if (CONTROL.test(decoded.trim())) return null;
  const letters = foldLetters(decoded);
  if (letters.length > MAX_INPUT) return null;
  const plate = PLATE_RE.exec(letters.trim());
  if (plate) return BY_PLATE[Number(plate[1])] ?? null;
  const key = foldTokens(letters).join('');
  return key ? (KEY_TO_PROVINCE.get(key) ?? null) : null;
}

/** Edit distance, abandoning once every cell of a row exceeds `limit` (then returns limit + 1). */
function levenshtein(a: string, b: string, limit: number): number {
  if (Math.abs(a.length - b.length) > limit) return limit + 1;
  let prev = new Array<number>(b.length + 1);
  let cur = new Array<number>(b.length + 1);
  for (let j = 0; j <= b.length; j++) prev[j] = j;
  for (let i = 1; i <= a.length; i++) {
    cur[0] = i;
    let rowMin = i;
    for (let j = 1; j <= b.length; j++) {
      const cost = a.charCodeAt(i - 1) === b.charCodeAt(j - 1) ? 0 : 1;
      const v = Math.min(prev[j]! + 1, cur[j - 1]! + 1, prev[j - 1]! + cost);
      cur[j] = v;
      if (v < rowMin) rowMin = v;
    }
    if (rowMin > limit) return limit + 1;
    [prev, cur] = [cur, prev];
  }
  return prev[b.length]!;
}

/**
 * "Did you mean" candidates: up to `max` provinces whose closest folded label is within
 * max(2, 40 % of the input key length) edits, nearest first, ties by plate. [] when nothing is close.
 * Meant for error messages only; resolution itself is never fuzzy.
 */
export function suggestCities(input: string, max = 3): Province[] {
  if (typeof input !== 'string' || !(max >= 1)) return [];
  const key = foldCityKey(decodeIfEncoded(input.slice(0, MAX_INPUT * 3)));
  if (key.length === 0) return [];
  const limit = Math.max(2, Math.floor(key.length * 0.4));
  const hits: { p: Province; d: number }[] = [];
  for (const [p, keys] of KEYS_BY_PROVINCE) {
    let best = limit + 1;
    for (const k of keys) best = Math.min(best, levenshtein(key, k, Math.min(limit, best)));
    if (best <= limit) hits.push({ p, d: best });
  }
  hits.sort((x, y) => x.d - y.d || x.p.plate - y.p.plate);
  return hits.slice(0, Math.floor(max)).map((h) => h.p);
}

// ---------------------------------------------------------------------------------------------
// Point → province (PROVINCES.md §3.4)

interface Polygon {
  province: Province;
  /** Flat [lon, lat, …] rings, first is the outer ring, the rest are holes; not closed. */
  rings: readonly Float64Array[];
  minLon: number;
  minLat: number;
  maxLon: number;
  maxLat: number;
}

const POLYGONS: readonly Polygon[] = rawBoundaries.flatMap((b) => {
  const province = BY_PLATE[b.plate];
  if (!province) throw new Error(`boundary for unknown plate ${b.plate}`);
  return b.polygons.map((rings): Polygon => {
    let minLon = Infinity;
    let minLat = Infinity;
    let maxLon = -Infinity;
    let maxLat = -Infinity;
    const arrs = rings.map((r) => Float64Array.from(r));
    // Holes cannot extend past the outer ring, so the outer ring alone gives the bbox.
    const outer = arrs[0] ?? new Float64Array();
    for (let i = 0; i < outer.length; i += 2) {
      const x = outer[i]!;
      const y = outer[i + 1]!;
      if (x < minLon) minLon = x;
      if (x > maxLon) maxLon = x;
      if (y < minLat) minLat = y;
      if (y > maxLat) maxLat = y;
    }
    return { province, rings: arrs, minLon, minLat, maxLon, maxLat };
  });
});

/** Even-odd crossing test over all rings, so holes fall out naturally. */
function polygonContains(poly: Polygon, lon: number, lat: number): boolean {
  let inside = false;
  for (const r of poly.rings) {
    const n = r.length;
    let xj = r[n - 2]!;
    let yj = r[n - 1]!;
    for (let i = 0; i < n; i += 2) {
      const xi = r[i]!;
      const yi = r[i + 1]!;
      if (yi > lat !== yj > lat && lon < ((xj - xi) * (lat - yi)) / (yj - yi) + xi) inside = !inside;
      xj = xi;
      yj = yi;
    }
  }
  return inside;
}

/**
 * The province whose polygon contains the point, with no fallback. Points on the simplified coastline's
 * sea side (bridges, piers) get null here; use {@link provinceAt} for events.
 */
export function provinceContaining(lat: number, lon: number): Province | null {
  if (!Number.isFinite(lat) || !Number.isFinite(lon)) return null;
  for (const p of POLYGONS) {
    if (lon < p.minLon || lon > p.maxLon || lat < p.minLat || lat > p.maxLat) continue;
    if (polygonContains(p, lon, lat)) return p.province;
  }
  return null;
}

const EARTH_RADIUS_KM = 6371.0088;
const KM_PER_DEG = (EARTH_RADIUS_KM * Math.PI) / 180;
/** Bridges, piers and coastline simplification stay within this; a larger value pulls in Greece or Syria. */
export const FALLBACK_KM = 5;
/** Turkey's bbox [25.669, 35.809, 44.818, 42.105] padded by ~5 km; nothing outside can be within FALLBACK_KM. */
const TURKEY_PADDED: BBox = [25.6, 35.75, 44.9, 42.15];

/** Squared distance in km² from the origin to segment (ax,ay)–(bx,by), all in local km. */
function segDist2(ax: number, ay: number, bx: number, by: number): number {
  const dx = bx - ax;
  const dy = by - ay;
  const len2 = dx * dx + dy * dy;
  let t = len2 > 0 ? -(ax * dx + ay * dy) / len2 : 0;
  if (t < 0) t = 0;
  else if (t > 1) t = 1;
  const x = ax + t * dx;
  const y = ay + t * dy;
  return x * x + y * y;
}

/** Nearest province boundary within FALLBACK_KM, measured with an equirectangular projection around the point. */
function nearestWithin(lat: number, lon: number): { province: Province; km: number } | null {
  const kx = KM_PER_DEG * Math.cos((lat * Math.PI) / 180);
  const ky = KM_PER_DEG;
  const padLon = FALLBACK_KM / kx;
  const padLat = FALLBACK_KM / ky;
  let best2 = FALLBACK_KM * FALLBACK_KM;
  let best: Province | null = null;
  for (const p of POLYGONS) {
    if (lon < p.minLon - padLon || lon > p.maxLon + padLon || lat < p.minLat - padLat || lat > p.maxLat + padLat) {
      continue;
    }
    for (const r of p.rings) {
      const n = r.length;
      let ax = (r[n - 2]! - lon) * kx;
      let ay = (r[n - 1]! - lat) * ky;
      for (let i = 0; i < n; i += 2) {
        const bx = (r[i]! - lon) * kx;
        const by = (r[i + 1]! - lat) * ky;
        const d2 = segDist2(ax, ay, bx, by);
        if (d2 <= best2) {
          best2 = d2;
          best = p.province;
        }
        ax = bx;
        ay = by;
      }
    }
  }
  return best ? { province: best, km: Math.sqrt(best2) } : null;
}

/**
 * The province an event at (lat, lon) belongs to: the containing polygon, else the nearest province
 * boundary within 5 km (bridges, piers, coastal roads), else null (outside Türkiye, or not finite).
 */
export function provinceAt(lat: number, lon: number): Province | null {
  const inside = provinceContaining(lat, lon);
  if (inside) return inside;
  if (!Number.isFinite(lat) || !Number.isFinite(lon)) return null;
  const [minLon, minLat, maxLon, maxLat] = TURKEY_PADDED;
  if (lon < minLon || lon > maxLon || lat < minLat || lat > maxLat) return null;
  return nearestWithin(lat, lon)?.province ?? null;
}

export interface ProvincePolygon {
  plate: number;
  /** Rings as flat `[lon, lat, lon, lat, …]` arrays (not closed); the first ring is the outer one. */
  rings: Float64Array[];
  bbox: BBox;
}

/**
 * Copies of the boundary polygons (one entry per polygon; a province with islands has several), for tools
 * that need the geometry itself, such as the scan-grid generator and tests. Copies, because typed arrays
 * cannot be frozen and the lookup must not be corruptible by a caller.
 */
export function provincePolygons(): ProvincePolygon[] {
  return POLYGONS.map((p) => ({
    plate: p.province.plate,
    rings: p.rings.map((r) => r.slice()),
    bbox: [p.minLon, p.minLat, p.maxLon, p.maxLat] as const,
  }));
}

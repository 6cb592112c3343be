/**
 * Derives src/scanner/grid/cells.json (exactly 220 scan cells) from the shared 216-cell grid
 * (/work/shared/data/grid-cells.json, 0.8° × 0.6° from origin 25.65 E 35.80 N) by splitting the four
 * densest metropolitan cells in two. Deterministic: same input, same bytes out.
 *
 *   bun scripts/make-grid.ts [path/to/grid-cells.json]
 *
 * Every cell's `provinces` (plates with land in the cell, largest share first) and `landKm2` are
 * recomputed by clipping the province polygons of src/provinces to the cell, so split halves get
 * their own lists; for unsplit cells the result is checked against the shared file.
 */
import { join } from 'node:path';
import { provincePolygons } from '../src/provinces/index.ts';

const SOURCE = process.argv[2] ?? '/work/shared/data/grid-cells.json';
const OUT = join(import.meta.dir, '../src/scanner/grid/cells.json');
const EXPECTED_TOTAL = 220;
const R = 6371.0088;

type BBox = [number, number, number, number];
interface SourceCell {
  id: string;
  bbox: BBox;
  provinces: number[];
  areaKm2: number;
  landKm2: number;
}

/**
 * The split lines run through each urban core rather than through the cell's middle: a midpoint cut
 * would leave every one of these cities almost whole in one half, and the reason to split at all is
 * to halve how many incidents a single request for the busiest area has to carry.
 * Half "a" is the west/south part, "b" the east/north part. `anchor` ([lat, lon]) guards against the
 * shared grid changing under us: the named place must be inside the cell.
 */
const SPLITS: readonly { id: string; axis: 'lon' | 'lat'; at: number; anchor: [number, number]; why: string }[] = [
  {
    id: 'c171',
    axis: 'lon',
    at: 28.7,
    anchor: [41.0, 28.7],
    why: 'İstanbul west: Silivri–Büyükçekmece–Esenyurt–Beylikdüzü | Avcılar–Küçükçekmece–Başakşehir–Bağcılar',
  },
  {
    id: 'c172',
    axis: 'lon',
    at: 29.1,
    anchor: [41.00638, 28.97587],
    why: 'İstanbul core: Fatih–Beyoğlu–Şişli–Beşiktaş–Üsküdar–Kadıköy | Ümraniye–Ataşehir–Kartal–Pendik–Tuzla–Gebze',
  },
  {
    id: 'c129',
    axis: 'lat',
    at: 39.93,
    anchor: [39.92078, 32.85405],
    why: 'Ankara (the cell holding the capital point; the city also spills into c128, c152 and c153): Kızılay–Çankaya–Mamak | Ulus–Altındağ–Keçiören',
  },
  {
    id: 'c074',
    axis: 'lat',
    at: 38.45,
    anchor: [38.41885, 27.12872],
    why: 'İzmir, along the inner gulf: Konak–Karabağlar–Buca–Gaziemir | Karşıyaka–Bayraklı–Bornova–Çiğli',
  },
];

// ------------------------------------------------------------------------------------------------
// Geometry

/** True area of a lon/lat rectangle on the sphere. */
function rectAreaKm2([minLon, minLat, maxLon, maxLat]: BBox): number {
  const rad = Math.PI / 180;
  return R * R * (maxLon - minLon) * rad * (Math.sin(maxLat * rad) - Math.sin(minLat * rad));
}

/**
 * Area of a ring given as flat [lon, lat, …], in km², measured in the Lambert cylindrical equal-area
 * projection (x = λ, y = sin φ), which is exact for the rectangles themselves and within rounding for
 * province edges a few km long. Signed: holes come out negative only if wound opposite, so callers take |·|.
 */
function ringAreaKm2(r: readonly number[]): number {
  const rad = Math.PI / 180;
  let s = 0;
  const n = r.length;
  for (let i = 0; i < n; i += 2) {
    const x1 = r[i]! * rad;
    const y1 = Math.sin(r[i + 1]! * rad);
    const x2 = r[(i + 2) % n]! * rad;
    const y2 = Math.sin(r[(i + 3) % n]! * rad);
    s += x1 * y2 - x2 * y1;
  }
  return (Math.abs(s) / 2) * R * R;
}

/**
 * Sutherland–Hodgman clip of a ring against an axis-aligned rectangle. The subject may be concave;
 * the result may then contain zero-width slivers along the rectangle edge, which add no area.
 */
function clipRing(ring: ArrayLike<number>, [minLon, minLat, maxLon, maxLat]: BBox): number[] {
  let pts: number[] = Array.from(ring);
  const edges: [(x: number, y: number) => boolean, (ax: number, ay: number, bx: number, by: number) => [number, number]][] = [
    [(x) => x >= minLon, (ax, ay, bx, by) => [minLon, ay + ((by - ay) * (minLon - ax)) / (bx - ax)]],
    [(x) => x <= maxLon, (ax, ay, bx, by) => [maxLon, ay + ((by - ay) * (maxLon - ax)) / (bx - ax)]],
    [(_, y) => y >= minLat, (ax, ay, bx, by) => [ax + ((bx - ax) * (minLat - ay)) / (by - ay), minLat]],
    [(_, y) => y <= maxLat, (ax, ay, bx, by) => [ax + ((bx - ax) * (maxLat - ay)) / (by - ay), maxLat]],
  ];
  for (const [inside, cross] of edges) {
    const n = pts.length;
    if (n === 0) break;
    const out: number[] = [];
    let px = pts[n - 2]!;
    let py = pts[n - 1]!;
    let pIn = inside(px, py);
    for (let i = 0; i < n; i += 2) {
      const x = pts[i]!;
      const y = pts[i + 1]!;
      const cIn = inside(x, y);
      if (cIn !== pIn) out.push(...cross(px, py, x, y));
      if (cIn) out.push(x, y);
      px = x;
      py = y;
      pIn = cIn;
    }
    pts = out;
  }
  return pts;
}

const POLYS = provincePolygons();

/** Land area per province inside `bbox`, km², largest first. */
function landByProvince(bbox: BBox): { plate: number; km2: number }[] {
  const byPlate = new Map<number, number>();
  for (const poly of POLYS) {
    const [a, b, c, d] = poly.bbox;
    if (a >= bbox[2] || c <= bbox[0] || b >= bbox[3] || d <= bbox[1]) continue;
    let km2 = 0;
    poly.rings.forEach((ring, i) => {
      const clipped = clipRing(ring, bbox);
      const area = clipped.length >= 6 ? ringAreaKm2(clipped) : 0;
      km2 += i === 0 ? area : -area;
    });
    // Any positive area counts, as in the shared file: Karaman's 0.001 km² in c059 is a real (if
    // simplified) sliver, and listing it costs nothing while dropping it would make "cells for a
    // province" miss land. Edge-only contact clips to zero area and is not listed.
    if (km2 > 0) byPlate.set(poly.plate, (byPlate.get(poly.plate) ?? 0) + km2);
  }
  return [...byPlate]
    .map(([plate, km2]) => ({ plate, km2 }))
    .sort((x, y) => y.km2 - x.km2 || x.plate - y.plate);
}

// ------------------------------------------------------------------------------------------------

function contains([minLon, minLat, maxLon, maxLat]: BBox, lat: number, lon: number): boolean {
  return lon >= minLon && lon < maxLon && lat >= minLat && lat < maxLat;
}

/** Shared-file coordinates are multiples of 0.05°; rounding keeps split edges bit-identical to their neighbours. */
const r6 = (v: number): number => Math.round(v * 1e6) / 1e6;

const source = (await Bun.file(SOURCE).json()) as SourceCell[];
const splitById = new Map(SPLITS.map((s) => [s.id, s]));
const seen = new Set<string>();

const cells: { id: string; bbox: BBox }[] = [];
for (const c of source) {
  const split = splitById.get(c.id);
  if (!split) {
    cells.push({ id: c.id, bbox: c.bbox });
    continue;
  }
  seen.add(c.id);
  const [minLon, minLat, maxLon, maxLat] = c.bbox;
  if (!contains(c.bbox, split.anchor[0], split.anchor[1])) {
    throw new Error(`${c.id} ${JSON.stringify(c.bbox)} no longer contains its anchor ${split.anchor.join(',')}`);
  }
  const lo = split.axis === 'lon' ? minLon : minLat;
  const hi = split.axis === 'lon' ? maxLon : maxLat;
  if (!(split.at > lo && split.at < hi)) throw new Error(`${c.id}: split at ${split.at} is outside ${lo}..${hi}`);
  const [a, b]: [BBox, BBox] =
    split.axis === 'lon'
      ? [
          [minLon, minLat, r6(split.at), maxLat],
          [r6(split.at), minLat, maxLon, maxLat],
        ]
      : [
          [minLon, minLat, maxLon, r6(split.at)],
          [minLon, r6(split.at), maxLon, maxLat],
        ];
  cells.push({ id: `${c.id}a`, bbox: a }, { id: `${c.id}b`, bbox: b });
}
for (const s of SPLITS) if (!seen.has(s.id)) throw new Error(`split target ${s.id} not in ${SOURCE}`);
if (cells.length !== EXPECTED_TOTAL) throw new Error(`expected ${EXPECTED_TOTAL} cells, made ${cells.length}`);

const sourceById = new Map(source.map((c) => [c.id, c]));
const warnings: string[] = [];
const out = cells.map(({ id, bbox }) => {
  const land = landByProvince(bbox);
  if (land.length === 0) throw new Error(`${id} has no land`);
  const cell = {
    id,
    bbox,
    provinces: land.map((x) => x.plate),
    areaKm2: Math.round(rectAreaKm2(bbox)),
    landKm2: Math.round(land.reduce((s, x) => s + x.km2, 0)),
  };
  const orig = sourceById.get(id);
  if (orig) {
    // Independent check of the clipping against the shared file's own computation.
    const sameSet = [...orig.provinces].sort().join() === [...cell.provinces].sort().join();
    if (!sameSet || Math.abs(orig.landKm2 - cell.landKm2) > Math.max(2, orig.landKm2 * 0.01) || orig.areaKm2 !== cell.areaKm2) {
      warnings.push(
        `${id}: shared ${JSON.stringify([orig.provinces, orig.landKm2, orig.areaKm2])} vs ours ${JSON.stringify([cell.provinces, cell.landKm2, cell.areaKm2])}`,
      );
    }
  }
  return cell;
});

await Bun.write(OUT, `[\n${out.map((c) => JSON.stringify(c)).join(',\n')}\n]\n`);
for (const s of SPLITS) {
  const halves = out.filter((c) => c.id === `${s.id}a` || c.id === `${s.id}b`);
  console.log(`${s.id} split at ${s.axis} ${s.at}: ${s.why}`);
  for (const h of halves) console.log(`  ${h.id} ${JSON.stringify(h.bbox)} provinces ${h.provinces.join(',')} land ${h.landKm2} km² of ${h.areaKm2}`);
}
if (warnings.length) console.warn(`differences from the shared file:\n  ${warnings.join('\n  ')}`);
console.log(`wrote ${out.length} cells to ${OUT}`);

import { describe, expect, test } from 'bun:test';
import { PROVINCES, provinceContaining, provincePolygons } from '../../src/provinces/index.ts';
import { GRID_CELLS, gridCellById, gridCellsForProvince, type GridCell } from '../../src/scanner/grid/index.ts';
import type { Cell } from '../../src/scanner/sources/source.ts';

const R = 6371.0088;
const rad = (d: number): number => (d * Math.PI) / 180;
const EPS = 1e-9;

function sphericalAreaKm2(c: Cell): number {
  const [minLon, minLat, maxLon, maxLat] = c.bbox;
  return R * R * rad(maxLon - minLon) * (Math.sin(rad(maxLat)) - Math.sin(rad(minLat)));
}

/** What the bbox measures in Web Mercator, in case TomTom computes its 10,000 km² cap that way. */
function mercatorAreaKm2(c: Cell): number {
  const [minLon, minLat, maxLon, maxLat] = c.bbox;
  const y = (lat: number): number => Math.log(Math.tan(Math.PI / 4 + rad(lat) / 2));
  return R * R * rad(maxLon - minLon) * (y(maxLat) - y(minLat));
}

/** Closed containment: a point on a shared edge counts for both cells, as TomTom's bbox query does. */
function inCell(c: Cell, lat: number, lon: number): boolean {
  const [minLon, minLat, maxLon, maxLat] = c.bbox;
  return lon >= minLon - EPS && lon <= maxLon + EPS && lat >= minLat - EPS && lat <= maxLat + EPS;
}

function strictlyInside(c: Cell, lat: number, lon: number): boolean {
  const [minLon, minLat, maxLon, maxLat] = c.bbox;
  return lon > minLon + EPS && lon < maxLon - EPS && lat > minLat + EPS && lat < maxLat - EPS;
}

// The grid the cells derive from: 0.8° × 0.6° from origin 25.65 E, 35.80 N.
const DLON = 0.8;
const DLAT = 0.6;
const onGrid = (v: number, origin: number, step: number): boolean => {
  const k = (v - origin) / step;
  return Math.abs(k - Math.round(k)) < 1e-6;
};

// Flat copy of the bboxes so the ~200,000-point sweep below stays well under a second.
const FLAT = Float64Array.from(GRID_CELLS.flatMap((c) => c.bbox));

function cellsAt(lat: number, lon: number): GridCell[] {
  const out: GridCell[] = [];
  for (let i = 0; i < GRID_CELLS.length; i++) {
    const k = i * 4;
    if (lon >= FLAT[k]! - EPS && lon <= FLAT[k + 2]! + EPS && lat >= FLAT[k + 1]! - EPS && lat <= FLAT[k + 3]! + EPS) {
      out.push(GRID_CELLS[i]!);
    }
  }
  return out;
}

/**
 * One lattice over Türkiye at 0.02° (~3.8 km² per point), classified by the polygon test (no 5 km
 * fallback), with the cells that contain each point. Built once: the tests below share it.
 */
const SAMPLES: { lat: number; lon: number; plate: number; cells: GridCell[] }[] = (() => {
  const out: { lat: number; lon: number; plate: number; cells: GridCell[] }[] = [];
  for (let lat = 35.8 + 0.0073; lat < 42.11; lat += 0.02) {
    for (let lon = 25.66 + 0.0091; lon < 44.82; lon += 0.02) {
      const p = provinceContaining(lat, lon);
      if (p) out.push({ lat, lon, plate: p.plate, cells: cellsAt(lat, lon) });
    }
  }
  return out;
})();

describe('GRID_CELLS', () => {
  test('exactly 220 cells with unique, readable ids', () => {
    expect(GRID_CELLS.length).toBe(220);
    const ids = GRID_CELLS.map((c) => c.id);
    expect(new Set(ids).size).toBe(220);
    for (const id of ids) expect(id).toMatch(/^c\d{3}[ab]?$/);
    for (const c of GRID_CELLS) expect(gridCellById(c.id)).toBe(c);
    expect(gridCellById('nope')).toBeUndefined();
  });

  test('cells are usable wherever a source Cell is expected', () => {
    const cell: Cell = GRID_CELLS[0]!;
    expect(cell.bbox.length).toBe(4);
    const [minLon, minLat, maxLon, maxLat] = cell.bbox;
    expect(minLon).toBeLessThan(maxLon);
    expect(minLat).toBeLessThan(maxLat);
  });

  test('every cell is well inside TomTom’s 10,000 km² cap, even measured in Web Mercator', () => {
    for (const c of GRID_CELLS) {
      const km2 = sphericalAreaKm2(c);
      expect({ id: c.id, under: km2 < 10_000 }).toEqual({ id: c.id, under: true });
      expect(mercatorAreaKm2(c)).toBeLessThan(10_000);
      expect(km2).toBeGreaterThan(100);
      // The stored figure is informative only, but must not disagree with the geometry.
      expect(Math.abs(c.areaKm2 - km2)).toBeLessThan(1);
      expect(c.landKm2).toBeGreaterThan(0);
      expect(c.landKm2).toBeLessThanOrEqual(c.areaKm2 + 1);
    }
  });

  test('no two cells overlap', () => {
    for (let i = 0; i < GRID_CELLS.length; i++) {
      const [a0, a1, a2, a3] = GRID_CELLS[i]!.bbox;
      for (let j = i + 1; j < GRID_CELLS.length; j++) {
        const [b0, b1, b2, b3] = GRID_CELLS[j]!.bbox;
        const overlap = a0 < b2 - EPS && b0 < a2 - EPS && a1 < b3 - EPS && b1 < a3 - EPS;
        if (overlap) expect(`${GRID_CELLS[i]!.id} overlaps ${GRID_CELLS[j]!.id}`).toBe('');
      }
    }
  });

  test('cells are whole 0.8° × 0.6° grid cells or one of four split pairs that tile one', () => {
    const halves = new Map<string, GridCell[]>();
    for (const c of GRID_CELLS) {
      const [minLon, minLat, maxLon, maxLat] = c.bbox;
      if (/[ab]$/.test(c.id)) {
        const base = c.id.slice(0, -1);
        halves.set(base, [...(halves.get(base) ?? []), c]);
        continue;
      }
      expect(onGrid(minLon, 25.65, DLON) && onGrid(minLat, 35.8, DLAT)).toBe(true);
      expect(maxLon - minLon).toBeCloseTo(DLON, 9);
      expect(maxLat - minLat).toBeCloseTo(DLAT, 9);
    }
    expect(halves.size).toBe(4);
    for (const [base, pair] of halves) {
      expect(pair.map((c) => c.id).sort()).toEqual([`${base}a`, `${base}b`]);
      const [a, b] = pair as [GridCell, GridCell];
      const union = [
        Math.min(a.bbox[0], b.bbox[0]),
        Math.min(a.bbox[1], b.bbox[1]),
        Math.max(a.bbox[2], b.bbox[2]),
        Math.max(a.bbox[3], b.bbox[3]),
      ] as const;
      expect(onGrid(union[0], 25.65, DLON) && onGrid(union[1], 35.8, DLAT)).toBe(true);
      expect(union[2] - union[0]).toBeCloseTo(DLON, 9);
      expect(union[3] - union[1]).toBeCloseTo(DLAT, 9);
      expect(sphericalAreaKm2(a) + sphericalAreaKm2(b)).toBeCloseTo(
        sphericalAreaKm2({ id: base, bbox: [union[0], union[1], union[2], union[3]] }),
        6,
      );
      // "a" is the west/south half, "b" the east/north one.
      expect(a.bbox[0] <= b.bbox[0] && a.bbox[1] <= b.bbox[1]).toBe(true);
    }
  });

  // Hand-picked city-centre points (public maps), not taken from the data under test.
  test.each([
    ['İstanbul, Sultanahmet', 41.006, 28.977],
    ['İstanbul, Kadıköy', 40.99, 29.03],
    ['İstanbul, Esenyurt', 41.03, 28.67],
    ['İstanbul, Bağcılar', 41.04, 28.83],
    ['İstanbul, Ümraniye', 41.02, 29.12],
    ['Ankara, Kızılay', 39.92, 32.854],
    ['Ankara, Keçiören', 39.98, 32.86],
    ['İzmir, Konak', 38.419, 27.128],
    ['İzmir, Karşıyaka', 38.46, 27.11],
  ])('%s lies in a split cell', (_name, lat, lon) => {
    const hits = cellsAt(lat, lon);
    expect(hits.length).toBe(1);
    expect(hits[0]!.id).toMatch(/[ab]$/);
  });

  test('the split halves each hold part of their city', () => {
    const byId = (id: string): GridCell => gridCellById(id)!;
    const splitIds = GRID_CELLS.filter((c) => /[ab]$/.test(c.id)).map((c) => c.id);
    // Each split is across a metropolitan area: both halves have that city's province.
    for (const id of splitIds) expect(byId(id).provinces.some((p) => p === 34 || p === 6 || p === 35)).toBe(true);
  });

  test('every capital city is inside a cell', () => {
    for (const p of PROVINCES) {
      const hits = cellsAt(p.lat, p.lon);
      expect({ p: p.name, n: hits.length > 0 }).toEqual({ p: p.name, n: true });
      expect(hits.some((c) => c.provinces.includes(p.plate))).toBe(true);
    }
  });

  test('no gaps over land: every sampled point of every province is in a cell', () => {
    const perProvince = new Map<number, number>();
    const uncovered: string[] = [];
    for (const s of SAMPLES) {
      perProvince.set(s.plate, (perProvince.get(s.plate) ?? 0) + 1);
      if (s.cells.length === 0) uncovered.push(`${s.plate}@${s.lat},${s.lon}`);
    }
    expect(uncovered.slice(0, 10)).toEqual([]);
    // Every province was actually sampled (Yalova, the smallest, is ~800 km² ≈ 200+ points).
    expect(perProvince.size).toBe(81);
    for (const n of perProvince.values()) expect(n).toBeGreaterThan(150);
    // ~3.8 km² per sample: the samples add up to roughly Türkiye's ~780,000 km².
    expect(SAMPLES.length * 3.8).toBeGreaterThan(700_000);
    expect(SAMPLES.length * 3.8).toBeLessThan(900_000);
  });

  test('no gaps at the extremes: every boundary vertex is in a cell', () => {
    let n = 0;
    for (const poly of provincePolygons()) {
      for (const ring of poly.rings) {
        for (let i = 0; i < ring.length; i += 2) {
          const lon = ring[i]!;
          const lat = ring[i + 1]!;
          if (!GRID_CELLS.some((c) => inCell(c, lat, lon))) expect(`plate ${poly.plate} vertex ${lon},${lat}`).toBe('');
          n++;
        }
      }
    }
    expect(n).toBeGreaterThan(10_000);
  });

  test('each cell lists the provinces whose land it contains', () => {
    const listedSomewhere = new Set<number>();
    for (const c of GRID_CELLS) for (const p of c.provinces) listedSomewhere.add(p);
    expect(listedSomewhere.size).toBe(81);
    for (const s of SAMPLES) {
      for (const c of s.cells) {
        if (strictlyInside(c, s.lat, s.lon) && !c.provinces.includes(s.plate)) {
          expect(`${c.id} misses plate ${s.plate} at ${s.lat},${s.lon}`).toBe('');
        }
      }
    }
    // Conversely, a listed province must at least reach the cell with its polygon bbox.
    const polys = provincePolygons();
    for (const c of GRID_CELLS) {
      expect(new Set(c.provinces).size).toBe(c.provinces.length);
      for (const plate of c.provinces) {
        const reaches = polys.some(
          (p) => p.plate === plate && p.bbox[0] < c.bbox[2] && p.bbox[2] > c.bbox[0] && p.bbox[1] < c.bbox[3] && p.bbox[3] > c.bbox[1],
        );
        expect({ id: c.id, plate, reaches }).toEqual({ id: c.id, plate, reaches: true });
      }
    }
  });

  test('gridCellsForProvince covers all of a province’s samples', () => {
    for (const plate of [6, 34, 35, 77, 81]) {
      const cells = gridCellsForProvince(plate);
      expect(cells.length).toBeGreaterThan(1);
      for (const s of SAMPLES) {
        if (s.plate === plate && !s.cells.some((c) => cells.includes(c))) expect(`${plate}@${s.lat},${s.lon}`).toBe('');
      }
    }
  });

  test('cells are frozen', () => {
    expect(Object.isFrozen(GRID_CELLS)).toBe(true);
    expect(Object.isFrozen(GRID_CELLS[0])).toBe(true);
    expect(Object.isFrozen(GRID_CELLS[0]?.bbox)).toBe(true);
  });
});

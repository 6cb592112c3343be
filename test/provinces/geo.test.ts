import { describe, expect, test } from 'bun:test';
import {
  BOUNDARY_ATTRIBUTION,
  PROVINCES,
  provinceAt,
  provinceContaining,
  provincePolygons,
} from '../../src/provinces/index.ts';

const R = 6371.0088;
const rad = (d: number): number => (d * Math.PI) / 180;

function haversineKm(lat1: number, lon1: number, lat2: number, lon2: number): number {
  const a =
    Math.sin(rad(lat2 - lat1) / 2) ** 2 + Math.cos(rad(lat1)) * Math.cos(rad(lat2)) * Math.sin(rad(lon2 - lon1) / 2) ** 2;
  return 2 * R * Math.asin(Math.min(1, Math.sqrt(a)));
}

const POLYS = provincePolygons();

/**
 * Brute-force great-circle distance from a point to each province's boundary, by densifying every
 * nearby edge to ~50 m steps. Deliberately a different method from the module's equirectangular one.
 */
function boundaryDistances(lat: number, lon: number, radiusKm: number): Map<number, number> {
  const out = new Map<number, number>();
  const padLat = radiusKm / 111;
  const padLon = radiusKm / (111 * Math.cos(rad(lat)));
  for (const poly of POLYS) {
    const [a, b, c, d] = poly.bbox;
    if (lon < a - padLon || lon > c + padLon || lat < b - padLat || lat > d + padLat) continue;
    for (const r of poly.rings) {
      const n = r.length;
      for (let i = 0; i < n; i += 2) {
        const x1 = r[i]!;
        const y1 = r[i + 1]!;
        const x2 = r[(i + 2) % n]!;
        const y2 = r[(i + 3) % n]!;
        if (Math.min(Math.abs(y1 - lat), Math.abs(y2 - lat)) > padLat + Math.abs(y2 - y1)) continue;
        if (Math.min(Math.abs(x1 - lon), Math.abs(x2 - lon)) > padLon + Math.abs(x2 - x1)) continue;
        const steps = Math.max(1, Math.ceil(haversineKm(y1, x1, y2, x2) / 0.05));
        for (let s = 0; s <= steps; s++) {
          const t = s / steps;
          const km = haversineKm(lat, lon, y1 + t * (y2 - y1), x1 + t * (x2 - x1));
          if (km < (out.get(poly.plate) ?? Infinity)) out.set(poly.plate, km);
        }
      }
    }
  }
  return out;
}

describe('provinceAt', () => {
  test('every capital lies in its own province, without the fallback', () => {
    for (const p of PROVINCES) {
      expect({ p: p.name, got: provinceContaining(p.lat, p.lon)?.name }).toEqual({ p: p.name, got: p.name });
      expect(provinceAt(p.lat, p.lon)).toBe(p);
    }
  });

  // Coordinates of town centres from public maps, with the province they belong to.
  test.each([
    ['Tuzla', 40.816, 29.3, 34],
    ['Gebze', 40.8, 29.43, 41],
    ['Darıca', 40.764, 29.376, 41],
    ['Pendik', 40.877, 29.235, 34],
    ['Silivri', 41.074, 28.247, 34],
    ['Çorlu', 41.159, 27.8, 59],
    ['Altınova', 40.695, 29.51, 77],
    ['Bozüyük', 39.907, 30.037, 11],
    ['İnegöl', 40.078, 29.51, 16],
    ['Akçakoca', 41.087, 31.116, 81],
    ['Karadeniz Ereğli', 41.28, 31.42, 67],
    ['İskenderun', 36.587, 36.17, 31],
    ['Tarsus', 36.918, 34.893, 33],
    ['Alanya', 36.544, 31.999, 7],
    ['Kadıköy', 40.99, 29.03, 34],
    ['Kızılay (Ankara)', 39.92, 32.854, 6],
    ['Konak (İzmir)', 38.419, 27.128, 35],
  ])('%s (%p, %p) → plate %p', (_name, lat, lon, plate) => {
    expect(provinceAt(lat, lon)?.plate).toBe(plate);
  });

  // Off the simplified coastline, so only the 5 km fallback can place them.
  test.each([
    ['15 Temmuz bridge', 41.045, 29.034, 34],
    ['FSM bridge', 41.091, 29.061, 34],
    ['Galata bridge', 41.02, 28.973, 34],
  ])('%s (%p, %p) → plate %p', (_name, lat, lon, plate) => {
    expect(provinceAt(lat, lon)?.plate).toBe(plate);
  });

  test.each([
    ['Thessaloniki', 40.64, 22.94],
    ['Sofia', 42.7, 23.32],
    ['Tbilisi', 41.72, 44.79],
    ['Yerevan', 40.18, 44.51],
    ['Aleppo', 36.2, 37.13],
    ['Mosul', 36.34, 43.13],
    ['Nicosia', 35.17, 33.36],
    ['Rhodes town', 36.434, 28.217],
    ['Mytilene', 39.105, 26.555],
    ['middle of the Black Sea', 43.0, 34.0],
    ['Black Sea, 30 km off Sinop', 42.3, 35.15],
    ['Mediterranean off Antalya', 36.3, 30.9],
    ['null island', 0, 0],
  ])('%s is outside Türkiye', (_name, lat, lon) => {
    expect(provinceAt(lat, lon)).toBeNull();
  });

  test('non-finite and out-of-range coordinates → null, no throw', () => {
    for (const [lat, lon] of [
      [NaN, 29],
      [41, NaN],
      [Infinity, 29],
      [41, -Infinity],
      [NaN, NaN],
      [91, 29],
      [41, 400],
    ] as const) {
      expect(provinceAt(lat, lon)).toBeNull();
      expect(provinceContaining(lat, lon)).toBeNull();
    }
  });

  test('fallback answers only within 5 km of the named province, and always answers within 4.9 km', () => {
    // Deterministic lattice over the coastal and land-border band: points that no polygon contains.
    let checked = 0;
    let fellBack = 0;
    for (let lat = 35.8; lat <= 42.15; lat += 0.0731) {
      for (let lon = 25.6; lon <= 44.9; lon += 0.0917) {
        if (provinceContaining(lat, lon)) continue;
        const dist = boundaryDistances(lat, lon, 6);
        let nearestKm = Infinity;
        for (const km of dist.values()) {
          if (km < nearestKm) {
            nearestKm = km;
          }
        }
        const got = provinceAt(lat, lon);
        if (nearestKm > 5.1) expect({ lat, lon, got }).toEqual({ lat, lon, got: null });
        if (nearestKm < 4.9) {
          expect(got).not.toBeNull();
          // The answer must be a province whose boundary is (almost) as close as the nearest one.
          expect(dist.get(got?.plate ?? -1)).toBeLessThan(nearestKm + 0.05);
        }
        if (got) {
          fellBack++;
          expect(dist.has(got.plate)).toBe(true);
        }
        checked++;
      }
    }
    expect(checked).toBeGreaterThan(1000);
    expect(fellBack).toBeGreaterThan(20);
  }, 60_000);

  test('polygons do not overlap: a lattice point is in at most one province', () => {
    let inside = 0;
    for (let lat = 35.81; lat < 42.1; lat += 0.05) {
      for (let lon = 25.67; lon < 44.82; lon += 0.05) {
        let hits = 0;
        for (const poly of POLYS) {
          const [a, b, c, d] = poly.bbox;
          if (lon < a || lon > c || lat < b || lat > d) continue;
          let odd = false;
          for (const r of poly.rings) {
            for (let i = 0, n = r.length; i < n; i += 2) {
              const x1 = r[i]!;
              const y1 = r[i + 1]!;
              const x2 = r[(i + 2) % n]!;
              const y2 = r[(i + 3) % n]!;
              if (y1 > lat !== y2 > lat && lon < ((x2 - x1) * (lat - y1)) / (y2 - y1) + x1) odd = !odd;
            }
          }
          if (odd) hits++;
        }
        expect(hits).toBeLessThanOrEqual(1);
        if (hits === 1) inside++;
      }
    }
    // Türkiye is ~783,600 km²; each 0.05° cell is ~23 km² at these latitudes.
    expect(inside * 23).toBeGreaterThan(700_000);
    expect(inside * 23).toBeLessThan(900_000);
  }, 60_000);

  test('speed: ~10 µs per point or better', () => {
    const pts: [number, number][] = [];
    let seed = 7;
    const rnd = (): number => {
      seed = (seed * 1103515245 + 12345) & 0x7fffffff;
      return seed / 0x7fffffff;
    };
    for (let i = 0; i < 50_000; i++) pts.push([35.8 + rnd() * 6.3, 25.67 + rnd() * 19.15]);
    for (const [lat, lon] of pts.slice(0, 2000)) provinceAt(lat, lon);
    const t0 = performance.now();
    let found = 0;
    for (const [lat, lon] of pts) if (provinceAt(lat, lon)) found++;
    const us = ((performance.now() - t0) * 1000) / pts.length;
    // About 3/4 of Türkiye's bbox is Turkish land, the rest exercises the fallback and the null path.
    expect(found / pts.length).toBeGreaterThan(0.6);
    expect(us).toBeLessThan(20);
  });
});

test('the exported attribution is the one in the README (CC BY-IGO)', async () => {
  const readme = await Bun.file(new URL('../../src/provinces/README.md', import.meta.url)).text();
  const quoted = readme
    .split('\n')
    .filter((l) => l.startsWith('> '))
    .map((l) => l.slice(2))
    .join(' ')
    .replaceAll('`', '');
  expect(quoted).toBe(BOUNDARY_ATTRIBUTION);
  expect(BOUNDARY_ATTRIBUTION).toContain('CC BY-IGO');
  expect(BOUNDARY_ATTRIBUTION).toContain('Harita Genel Müdürlüğü');
});

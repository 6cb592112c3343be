/**
 * Regenerates `provinces.json` and `boundaries.json` in this folder from the shared reference data.
 * Run from the repo root: `bun src/provinces/make-data.ts [/path/to/shared/data]`.
 * It lives next to the data (not in scripts/) so the module and the recipe for its data travel together;
 * nothing imports it at runtime.
 */
import { join } from 'node:path';

const SRC = process.argv[2] ?? '/work/shared/data';
const OUT = import.meta.dir;

interface RawProvince {
  plate: number;
  name: string;
  ascii: string;
  aliases: string[];
  lat: number;
  lon: number;
  region: string;
  bbox: [number, number, number, number];
}

type Ring = [number, number][];
type Geometry = { type: 'Polygon'; coordinates: Ring[] } | { type: 'MultiPolygon'; coordinates: Ring[][] };
interface Feature {
  properties: { plate: number; name: string };
  geometry: Geometry;
}

const raw = (await Bun.file(join(SRC, 'provinces.json')).json()) as RawProvince[];
if (raw.length !== 81) throw new Error(`expected 81 provinces, got ${raw.length}`);

const provinces = raw
  .slice()
  .sort((a, b) => a.plate - b.plate)
  .map((p, i) => {
    if (p.plate !== i + 1) throw new Error(`plates are not 1..81 (at index ${i}: ${p.plate})`);
    const slug = p.ascii.toLowerCase().replace(/[^a-z]/g, '');
    if (slug.length === 0) throw new Error(`empty slug for plate ${p.plate}`);
    return {
      plate: p.plate,
      name: p.name,
      slug,
      ascii: p.ascii,
      aliases: p.aliases,
      lat: p.lat,
      lon: p.lon,
      region: p.region,
      bbox: p.bbox,
    };
  });

// One province per line keeps diffs readable when a fact changes.
await Bun.write(join(OUT, 'provinces.json'), `[\n${provinces.map((p) => JSON.stringify(p)).join(',\n')}\n]\n`);

const geo = (await Bun.file(join(SRC, 'boundaries/tr-provinces-codab-dp500.geojson')).json()) as {
  features: Feature[];
};
const round4 = (v: number): number => Math.round(v * 1e4) / 1e4;

// Rings are stored flat ([lon, lat, lon, lat, …], GeoJSON order, closing vertex dropped): about a third
// smaller than nested pairs and loaded straight into Float64Arrays.
const boundaries = geo.features
  .map((f) => {
    const g = f.geometry;
    const polys: Ring[][] = g.type === 'Polygon' ? [g.coordinates] : g.coordinates;
    return {
      plate: f.properties.plate,
      polygons: polys.map((rings) =>
        rings.map((ring) => {
          const open = ring.length > 1 && ring[0]![0] === ring.at(-1)![0] && ring[0]![1] === ring.at(-1)![1] ? ring.slice(0, -1) : ring;
          return open.flatMap(([lon, lat]) => [round4(lon), round4(lat)]);
        }),
      ),
    };
  })
  .sort((a, b) => a.plate - b.plate);

if (boundaries.length !== 81 || boundaries.some((b, i) => b.plate !== i + 1)) {
  throw new Error('boundary features are not exactly plates 1..81');
}

await Bun.write(
  join(OUT, 'boundaries.json'),
  `[\n${boundaries.map((b) => JSON.stringify(b)).join(',\n')}\n]\n`,
);
console.log(`wrote ${provinces.length} provinces and ${boundaries.length} boundaries to ${OUT}`);

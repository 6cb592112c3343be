#!/usr/bin/env bun
/**
 * Writes the offline demo dataset, demo/replay/{waze,tomtom,here}/*.json: recordings in the exact
 * upstream schemas (see scripts/upstream-payloads.ts) with SYNTHETIC content — invented incidents on
 * real Turkish roads and districts, one morning rush hour. Deterministic: the same files on every
 * run and machine (a seeded PRNG, fixed timestamps, no clock, no network). See demo/README.md.
 *
 *   bun scripts/make-demo.ts [outDir]    (default: demo/replay)
 */
import { copyFileSync, mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { provinceAt } from '../src/provinces/index.ts';
import {
  hereResponse,
  hereResult,
  linePoints,
  seededRandom,
  tomtomIncident,
  tomtomResponse,
  uuidFrom,
  wazeAlert,
  wazeJam,
  wazeResponse,
} from './upstream-payloads.ts';

const ROOT = join(import.meta.dir, '..');
const OUT = process.argv[2] ?? join(ROOT, 'demo', 'replay');
/** The recorded moment: Saturday 21 November 2026, 09:30 in Türkiye (06:30 UTC). */
const RECORDED_AT = Date.UTC(2026, 10, 21, 6, 30);
const SEED = 20261121;

interface Place {
  district: string;
  road: string;
  lat: number;
  lon: number;
  /** Direction of travel, degrees: jam lines and closures follow it. */
  bearing: number;
}

interface City {
  slug: string;
  plate: number;
  /** Who files closures in Waze (`reportBy`): the metropolitan municipality. */
  municipality: string;
  /** Road numbers TomTom would list for the city's trunk roads. */
  roadNumbers: string[];
  places: Place[];
  /** Keyed sources recorded for this city besides Waze. */
  also: ('tomtom' | 'here')[];
}

const p = (district: string, road: string, lat: number, lon: number, bearing: number): Place => ({ district, road, lat, lon, bearing });

const CITIES: City[] = [
  {
    slug: 'istanbul', plate: 34, municipality: 'İBB', roadNumbers: ['D100', 'O-1', 'O-2'], also: [],
    places: [
      p('Şişli', 'Büyükdere Cd.', 41.0602, 28.9877, 20), p('Beşiktaş', 'Barbaros Blv.', 41.045, 29.005, 350),
      p('Kadıköy', 'D100 / E-5', 40.979, 29.06, 80), p('Ümraniye', 'O-2 / TEM', 41.025, 29.115, 100),
      p('Bakırköy', 'Kennedy Cd.', 40.975, 28.86, 110), p('Esenyurt', 'D100 / E-5', 41.02, 28.67, 90),
      p('Sarıyer', 'Sarıyer Cd.', 41.17, 29.05, 20), p('Maltepe', 'Sahil Yolu', 40.92, 29.13, 120),
      p('Fatih', 'Vatan Cd.', 41.015, 28.94, 110),
    ],
  },
  {
    slug: 'ankara', plate: 6, municipality: 'Ankara Büyükşehir Belediyesi', roadNumbers: ['D200', 'D750', 'O-20'], also: ['tomtom'],
    places: [
      p('Çankaya', 'Eskişehir Yolu', 39.91, 32.78, 270), p('Çankaya', 'Atatürk Blv.', 39.92, 32.854, 0),
      p('Yenimahalle', 'İstanbul Yolu', 39.96, 32.77, 290), p('Keçiören', 'Fatih Cd.', 39.98, 32.865, 10),
      p('Etimesgut', 'Ayaş Yolu', 39.95, 32.66, 280), p('Gölbaşı', 'Konya Yolu', 39.8, 32.81, 190),
    ],
  },
  {
    slug: 'izmir', plate: 35, municipality: 'İzmir Büyükşehir Belediyesi', roadNumbers: ['O-30', 'D550'], also: ['here'],
    places: [
      p('Konak', 'Mustafa Kemal Sahil Blv.', 38.415, 27.125, 200), p('Bornova', 'Ankara Cd.', 38.455, 27.21, 80),
      p('Karşıyaka', 'Cemal Gürsel Cd.', 38.458, 27.11, 280), p('Buca', 'İzmir Çevre Yolu', 38.39, 27.18, 100),
      p('Bayraklı', 'Altınyol', 38.455, 27.16, 60),
    ],
  },
  {
    slug: 'bursa', plate: 16, municipality: 'Bursa Büyükşehir Belediyesi', roadNumbers: ['D200', 'D575'], also: ['here'],
    places: [p('Osmangazi', 'Atatürk Cd.', 40.195, 29.06, 90), p('Nilüfer', 'Mudanya Yolu', 40.23, 28.99, 330), p('Yıldırım', 'Ankara Yolu', 40.19, 29.1, 100)],
  },
  {
    slug: 'antalya', plate: 7, municipality: 'Antalya Büyükşehir Belediyesi', roadNumbers: ['D400', 'D650'], also: ['here'],
    places: [
      p('Muratpaşa', 'Atatürk Cd.', 36.89, 30.705, 0), p('Konyaaltı', 'Konyaaltı Cd.', 36.88, 30.66, 260),
      p('Kepez', 'Dumlupınar Blv.', 36.92, 30.68, 80), p('Aksu', 'Serik Cd.', 36.91, 30.82, 90),
    ],
  },
  {
    slug: 'kocaeli', plate: 41, municipality: 'Kocaeli Büyükşehir Belediyesi', roadNumbers: ['D100', 'O-4'], also: [],
    places: [p('İzmit', 'D100 / E-5', 40.765, 29.94, 90), p('Gebze', 'O-4 / TEM', 40.8, 29.43, 80), p('Körfez', 'D100 / E-5', 40.77, 29.74, 90)],
  },
  {
    slug: 'konya', plate: 42, municipality: 'Konya Büyükşehir Belediyesi', roadNumbers: ['D300', 'D715'], also: ['tomtom'],
    places: [p('Selçuklu', 'Yeni İstanbul Cd.', 37.91, 32.5, 330), p('Meram', 'Meram Yeni Yol', 37.85, 32.45, 240), p('Karatay', 'Ankara Cd.', 37.88, 32.53, 60)],
  },
  {
    slug: 'gaziantep', plate: 27, municipality: 'Gaziantep Büyükşehir Belediyesi', roadNumbers: ['D400', 'O-54'], also: ['here'],
    places: [p('Şahinbey', 'İnönü Cd.', 37.06, 37.38, 90), p('Şehitkamil', 'Kuzey Çevre Yolu', 37.1, 37.36, 90)],
  },
  {
    slug: 'adana', plate: 1, municipality: 'Adana Büyükşehir Belediyesi', roadNumbers: ['D400', 'O-51'], also: ['tomtom'],
    places: [p('Seyhan', 'Turhan Cemal Beriker Blv.', 36.99, 35.3, 270), p('Çukurova', 'Turgut Özal Blv.', 37.04, 35.29, 0), p('Yüreğir', 'D400', 36.98, 35.36, 90)],
  },
  { slug: 'mersin', plate: 33, municipality: 'Mersin Büyükşehir Belediyesi', roadNumbers: ['D400'], also: ['tomtom'], places: [p('Yenişehir', 'GMK Blv.', 36.795, 34.59, 270)] },
  { slug: 'kayseri', plate: 38, municipality: 'Kayseri Büyükşehir Belediyesi', roadNumbers: ['D300'], also: ['tomtom'], places: [p('Kocasinan', 'Sivas Cd.', 38.73, 35.49, 60)] },
  { slug: 'eskisehir', plate: 26, municipality: 'Eskişehir Büyükşehir Belediyesi', roadNumbers: ['D200'], also: [], places: [p('Tepebaşı', 'Porsuk Blv.', 39.777, 30.515, 90)] },
  { slug: 'samsun', plate: 55, municipality: 'Samsun Büyükşehir Belediyesi', roadNumbers: ['D010'], also: ['here'], places: [p('Atakum', 'Atatürk Blv.', 41.32, 36.29, 300)] },
  { slug: 'trabzon', plate: 61, municipality: 'Trabzon Büyükşehir Belediyesi', roadNumbers: ['D010'], also: ['here'], places: [p('Ortahisar', 'Sahil Yolu', 41.005, 39.73, 90)] },
  { slug: 'diyarbakir', plate: 21, municipality: 'Diyarbakır Büyükşehir Belediyesi', roadNumbers: ['D400'], also: [], places: [p('Kayapınar', 'Urfa Yolu', 37.93, 40.17, 250)] },
];

const ACCIDENT_NOTES = [undefined, 'İki araç çarpıştı', 'Zincirleme kaza', 'Sağ şerit kapalı', undefined];
const HAZARDS: [string, string, string | undefined][] = [
  ['HAZARD', 'HAZARD_ON_ROAD_POT_HOLE', 'Yolda çukur'],
  ['HAZARD', 'HAZARD_ON_SHOULDER_CAR_STOPPED', 'Emniyet şeridinde arızalı araç'],
  ['HAZARD', 'HAZARD_ON_ROAD_OBJECT', 'Yola düşmüş yük'],
  ['WEATHERHAZARD', 'HAZARD_WEATHER_FOG', 'Sis nedeniyle görüş mesafesi düşük'],
  ['HAZARD', 'HAZARD_ON_ROAD_LANE_CLOSED', 'Sol şerit çalışma nedeniyle kapalı'],
  ['WEATHERHAZARD', 'HAZARD_WEATHER_HEAVY_RAIN', undefined],
  ['CONSTRUCTION', '', 'Asfalt yenileme çalışması'],
];

const random = seededRandom(SEED);
const between = (lo: number, hi: number) => lo + random() * (hi - lo);
const pick = <T>(xs: readonly T[]): T => xs[Math.floor(random() * xs.length)]!;
const round6 = (n: number) => Math.round(n * 1e6) / 1e6;
const iso = (ms: number) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');

/** A point near `place`, checked to lie in the city's province (the scanner drops the rest). */
function near(city: City, place: Place, spread = 0.004): { lat: number; lon: number } {
  for (let i = 0; i < 50; i++) {
    const lat = round6(place.lat + between(-spread, spread));
    const lon = round6(place.lon + between(-spread, spread));
    if (provinceAt(lat, lon)?.plate === city.plate) return { lat, lon };
  }
  throw new Error(`no point in province ${city.plate} near ${place.district} / ${place.road}`);
}

/** Minutes before the recording, as epoch ms. */
const ago = (minutes: number) => RECORDED_AT - Math.round(minutes * 60) * 1000;

let serial = 611_200_000;
let jamId = 1_390_300_000;

function wazeCity(city: City): Record<string, unknown> {
  const alerts: Record<string, unknown>[] = [];
  const jams: Record<string, unknown>[] = [];
  city.places.forEach((place, i) => {
    const at = near(city, place);
    const common = { street: place.road, city: place.district, lat: at.lat, lon: at.lon, magvar: place.bearing, serial: serial++ };
    switch (i % 3) {
      case 0: {
        const major = random() < 0.35;
        alerts.push(wazeAlert({ ...common, uuid: uuidFrom(random), type: 'ACCIDENT', subtype: major ? 'ACCIDENT_MAJOR' : 'ACCIDENT_MINOR', pubMillis: ago(between(3, 40)), reliability: major ? 8 + Math.floor(random() * 3) : 5 + Math.floor(random() * 4), confidence: Math.floor(random() * 5), nThumbsUp: Math.floor(random() * 6), reportDescription: pick(ACCIDENT_NOTES), roadType: 3 }));
        break;
      }
      case 1: {
        const [type, subtype, note] = pick(HAZARDS);
        alerts.push(wazeAlert({ ...common, uuid: uuidFrom(random), type, subtype, pubMillis: ago(between(5, 120)), reliability: 5 + Math.floor(random() * 5), confidence: Math.floor(random() * 4), reportDescription: random() < 0.6 ? note : undefined }));
        break;
      }
      default: {
        // A closure reported by the municipality; the bigger cities show its blocked jam too.
        const uuid = uuidFrom(random);
        const subtype = random() < 0.7 ? 'ROAD_CLOSED_CONSTRUCTION' : 'ROAD_CLOSED_EVENT';
        const start = ago(between(60 * 6, 60 * 30));
        const closure = wazeAlert({ ...common, uuid, type: 'ROAD_CLOSED', subtype, pubMillis: start, reliability: 10, confidence: 5, reportBy: city.municipality, reportDescription: subtype === 'ROAD_CLOSED_CONSTRUCTION' ? 'Altyapı çalışması' : 'Etkinlik nedeniyle trafiğe kapalı', roadType: 2 });
        alerts.push(closure);
        if (city.places.length >= 5) {
          const line = linePoints(at.lat, at.lon, place.bearing, 3, 70);
          jams.push(wazeJam({ id: jamId++, line, level: 5, speedKMH: 0, length: 210, delay: -1, pubMillis: ago(between(10, 60)), street: place.road, city: place.district, blockedBy: { uuid, serial: common.serial, blockType: subtype, startMillis: start, cause: closure } }));
        }
      }
    }
    // Traffic: most places have a jam of level 2–4 along the road.
    if (random() < 0.75) {
      const start = near(city, place, 0.006);
      const level = 2 + Math.floor(random() * 3);
      const steps = 3 + Math.floor(random() * 4);
      const length = steps * 180;
      const speed = Math.round((level === 4 ? between(3, 12) : level === 3 ? between(12, 25) : between(25, 40)) * 100) / 100;
      const delay = Math.round((length / 1000 / speed - length / 1000 / 50) * 3600);
      jams.push(wazeJam({ id: jamId++, line: linePoints(start.lat, start.lon, place.bearing + between(-15, 15), steps), level, speedKMH: speed, length, delay: Math.max(30, delay), pubMillis: ago(between(2, 45)), street: place.road, city: place.district, endNode: city.places[(i + 1) % city.places.length]!.district }));
    }
  });
  // What the live map also carries and the scanner drops: a police report and a chit-chat.
  const first = city.places[0]!;
  const pol = near(city, first);
  alerts.push(wazeAlert({ uuid: uuidFrom(random), type: 'POLICE', subtype: 'POLICE_VISIBLE', lat: pol.lat, lon: pol.lon, pubMillis: ago(12), street: first.road, city: first.district, reliability: 6, serial: serial++ }));
  alerts.push(wazeAlert({ uuid: uuidFrom(random), type: 'CHIT_CHAT', subtype: '', lat: pol.lat, lon: pol.lon, pubMillis: ago(25), city: first.district, reliability: 5, serial: serial++ }));
  return wazeResponse(alerts, jams, RECORDED_AT);
}

function tomtomCity(city: City, n: number): Record<string, unknown> {
  const incidents: Record<string, unknown>[] = [];
  const id = (k: number) => `TTI-${uuidFrom(random)}-TTR${String(15_023_311_900_000_000_000 + n * 1000 + k).slice(0, 20)}`;
  city.places.forEach((place, i) => {
    const to = `${city.places[(i + 1) % city.places.length]!.district} Kavşağı`;
    const at = near(city, place);
    const roads = [city.roadNumbers[i % city.roadNumbers.length]!];
    const line = linePoints(at.lat, at.lon, place.bearing, 3, 200);
    const base = { from: place.road, to, roadNumbers: roads, startTime: iso(ago(between(5, 50))), lastReportTime: iso(ago(between(1, 5))) };
    switch (i % 4) {
      case 0:
        incidents.push(tomtomIncident({ ...base, id: id(i), iconCategory: 1, magnitudeOfDelay: 2 + Math.floor(random() * 2), events: [{ description: 'Kaza', code: 201, iconCategory: 1 }, { description: 'Duran trafik', code: 101, iconCategory: 6 }], coordinates: line, length: 600, delay: 240 + Math.floor(random() * 300), numberOfReports: 3, endTime: iso(RECORDED_AT + 3600_000) }));
        incidents.push(tomtomIncident({ ...base, id: id(i + 50), iconCategory: 14, magnitudeOfDelay: 1, events: [{ description: 'Arızalı araç', code: 211, iconCategory: 14 }], coordinates: [[near(city, place).lon, near(city, place).lat]], length: 0, delay: 45, numberOfReports: 1 }));
        break;
      case 1:
        incidents.push(tomtomIncident({ ...base, id: id(i), iconCategory: 6, magnitudeOfDelay: 2 + Math.floor(random() * 2), events: [{ description: 'Duran trafik', code: 101, iconCategory: 6 }], coordinates: linePoints(at.lat, at.lon, place.bearing, 6, 250), length: 1500, delay: 300 + Math.floor(random() * 400), probabilityOfOccurrence: 'certain' }));
        break;
      case 2:
        incidents.push(tomtomIncident({ ...base, id: id(i), iconCategory: 8, magnitudeOfDelay: 4, events: [{ description: 'Yol kapalı', code: 401, iconCategory: 8 }, { description: 'Yol çalışması', code: 701, iconCategory: 9 }], coordinates: line, length: 480, delay: null, startTime: iso(ago(60 * 24 * 9)), endTime: iso(RECORDED_AT + 20 * 24 * 3600_000) }));
        break;
      default:
        incidents.push(tomtomIncident({ ...base, id: id(i), iconCategory: 9, magnitudeOfDelay: 1, events: [{ description: 'Yol çalışması', code: 701, iconCategory: 9 }], coordinates: line, length: 350, delay: 60, probabilityOfOccurrence: 'probable' }));
    }
  });
  return tomtomResponse(incidents);
}

function hereCity(city: City): Record<string, unknown> {
  const results: Record<string, unknown>[] = [];
  let k = 0;
  const hereId = () => String(3_218_845_120_077_341_902n + BigInt(Math.floor(random() * 1e12)) + BigInt(k++));
  city.places.forEach((place, i) => {
    const next = city.places[(i + 1) % city.places.length]!;
    const at = near(city, place);
    const line = linePoints(at.lat, at.lon, place.bearing, 4, 150);
    const roadUpper = place.road.toLocaleUpperCase('tr-TR');
    const window = { startTime: iso(ago(between(5, 40))), endTime: iso(RECORDED_AT + 2 * 3600_000), entryTime: iso(ago(between(1, 4))) };
    const common = { line, roadDescription: roadUpper, lengthM: 600, ...window };
    const between2 = `${place.district} ile ${next.district} arasında`;
    const specs = [
      { type: 'accident', typeDescription: 'Kaza', criticality: 'major' as const, codes: [201], description: `${between2} - Kaza` },
      { type: 'congestion', typeDescription: 'Yoğun trafik', criticality: 'minor' as const, codes: [101], description: `${between2} - Yoğun trafik` },
      { type: 'construction', typeDescription: 'Yol çalışması', criticality: 'minor' as const, codes: [701], description: `${place.road} üzerinde yol çalışması` },
      { type: 'roadClosure', typeDescription: 'Yol kapalı', criticality: 'critical' as const, codes: [401], description: `${place.road} trafiğe kapalı`, roadClosed: true },
    ];
    for (const s of [specs[i % 4]!, specs[(i + 1) % 4]!]) {
      const originalId = hereId();
      // Updated incidents carry a new `id`; `originalId` stays (the scanner keys on it).
      const updateId = random() < 0.3 ? hereId() : originalId;
      results.push(hereResult({ ...common, ...s, originalId, updateId, line: s.type === 'congestion' ? linePoints(at.lat, at.lon, place.bearing + 10, 7, 200) : line }));
    }
  });
  return hereResponse(results, iso(RECORDED_AT - 24_000));
}

function writeJson(kind: string, name: string, payload: unknown): void {
  writeFileSync(join(OUT, kind, name), `${JSON.stringify(payload, null, 1)}\n`);
}

for (const kind of ['waze', 'tomtom', 'here']) {
  const dir = join(OUT, kind);
  mkdirSync(dir, { recursive: true });
  for (const f of readdirSync(dir)) if (f.endsWith('.json')) rmSync(join(dir, f));
}
// The hand-written synthetic samples of the shared set, as they are (copies kept in test/fixtures).
const FIXTURES = join(ROOT, 'test', 'fixtures', 'upstream');
copyFileSync(join(FIXTURES, 'synthetic-waze-georss-istanbul.json'), join(OUT, 'waze', '00-sample-istanbul.json'));
copyFileSync(join(FIXTURES, 'synthetic-tomtom-v5-ankara.json'), join(OUT, 'tomtom', '00-sample-ankara.json'));
copyFileSync(join(FIXTURES, 'synthetic-here-v7-incidents-istanbul.json'), join(OUT, 'here', '00-sample-istanbul.json'));

let files = 3;
CITIES.forEach((city, n) => {
  writeJson('waze', `${city.slug}.json`, wazeCity(city));
  files++;
  if (city.also.includes('tomtom')) {
    writeJson('tomtom', `${city.slug}.json`, tomtomCity(city, n));
    files++;
  }
  if (city.also.includes('here')) {
    writeJson('here', `${city.slug}.json`, hereCity(city));
    files++;
  }
});
process.stdout.write(`wrote ${files} recordings for ${CITIES.length} provinces to ${OUT}\n`);

import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { PROVINCES, type Province } from '../../src/provinces/index.ts';
import { testApp, type TestApp } from '../helpers/app.ts';
import { eventRow, insertEvents, insertScan } from '../helpers/factories.ts';
import { expectProblem, getList, type ListBody } from '../helpers/http.ts';

// Every province reachable through HTTP by every spelling CONTRACT §2 promises: official name
// (percent-encoded and raw), ASCII slug, Turkish upper case, plate code in both forms, aliases.

let t: TestApp;
beforeAll(async () => {
  t = await testApp();
  // One event per province at its capital, so each city list has exactly its own event.
  insertEvents(
    t.db.db,
    PROVINCES.map((p) => eventRow({ id: `evt_prov${String(p.plate).padStart(2, '0')}`, plate: p.plate, lat: p.lat, lon: p.lon }, t.clock.now)),
  );
  insertScan(t.db.db, t.clock.now - 10_000);
  t.readModel.refresh();
});
afterAll(() => t.cleanup());

function spellings(p: Province): string[] {
  const plate = String(p.plate);
  return [
    encodeURIComponent(p.name),
    p.name, // raw: the URL parser percent-encodes it on the way in
    encodeURIComponent(p.name.normalize('NFD')),
    p.slug,
    p.ascii,
    encodeURIComponent(p.name.toLocaleUpperCase('tr')),
    p.slug.toUpperCase(),
    plate,
    plate.padStart(2, '0'),
    `0${plate.padStart(2, '0')}`,
    ...p.aliases.map((a) => encodeURIComponent(a)),
  ];
}

async function expectCity(path: string, p: Province): Promise<ListBody> {
  const body = await getList(t, path);
  expect({ path, plate: body.meta.city?.plate }).toEqual({ path, plate: p.plate });
  expect(body.meta.city).toEqual({ slug: p.slug, name: p.name, plate: p.plate });
  return body;
}

test('there are 81 provinces, plates 1..81', () => {
  expect(PROVINCES.map((p) => p.plate)).toEqual(Array.from({ length: 81 }, (_, i) => i + 1));
});

describe('/api/v1/events/{city} resolves every spelling of every province', () => {
  for (const p of PROVINCES) {
    test(`${p.plate} ${p.name}`, async () => {
      for (const s of spellings(p)) await expectCity(`/api/v1/events/${s}`, p);
      const body = await expectCity(`/api/v1/events/${p.slug}`, p);
      expect(body.data.map((e) => e.id)).toEqual([`evt_prov${String(p.plate).padStart(2, '0')}`]);
      expect(body.data[0]!.city).toEqual({ slug: p.slug, name: p.name, plate: p.plate });
    });
  }
});

describe('?city= on /api/v1/events resolves spellings too', () => {
  const sample = [1, 6, 9, 27, 31, 33, 34, 35, 41, 46, 63, 76, 81].map((n) => PROVINCES[n - 1]!);
  for (const p of sample) {
    test(`${p.plate} ${p.name}`, async () => {
      for (const s of spellings(p)) {
        const body = await expectCity(`/api/v1/events?city=${s.includes('%') ? s : encodeURIComponent(s)}`, p);
        expect(body.data.every((e) => e.city.plate === p.plate)).toBe(true);
        expect(body.data).toHaveLength(1);
      }
    });
  }

  test('the next link of a ?city= list uses the canonical slug', async () => {
    const body = await getList(t, `/api/v1/events?city=${encodeURIComponent('İSTANBUL')}&limit=1`);
    expect(body.meta.city?.slug).toBe('istanbul');
    // One event only: no next page.
    expect(body.pagination.next).toBeNull();
  });
});

describe('Turkish specifics', () => {
  const cases: [string, number][] = [
    ['%C4%B0stanbul', 34], // İstanbul
    ['ISTANBUL', 34],
    ['Istanbul', 34],
    ['istanbul', 34],
    ['I%C4%9EDIR', 76], // IĞDIR
    ['%C4%B1%C4%9Fd%C4%B1r', 76], // ığdır
    ['ISPARTA', 32],
    ['%C4%B1sparta', 32], // ısparta (what toLocaleLowerCase('tr') makes)
    ['%C4%B0zmir%27de', 35], // İzmir'de
    ['%C5%9Eanl%C4%B1urfa%E2%80%99n%C4%B1n', 63], // Şanlıurfa’nın
    ['Antep', 27],
    ['Urfa', 63],
    ['Mara%C5%9F', 46],
    ['Afyon', 3],
    ['afyon-karahisar', 3],
    ['%C4%B0%C3%A7el', 33], // İçel
    ['%C4%B0zmit', 41],
    ['Adapazar%C4%B1', 54],
    ['Antakya', 31],
    ['El%C3%A2z%C4%B1%C4%9F', 23], // Elâzığ
    ['Hakk%C3%A2ri', 30], // Hakkâri
    ['TR-34', 34],
    ['tr34', 34],
    ['%20ankara%20', 6],
  ];
  for (const [s, plate] of cases) {
    test(`${decodeURIComponent(s)} → ${plate}`, async () => {
      await expectCity(`/api/v1/events/${s}`, PROVINCES[plate - 1]!);
    });
  }
});

describe('unknown spellings are 404 unknown_city, never auto-corrected', () => {
  for (const s of ['Merkez', 'Kar', '0', '00', '82', '100', 'Constantinople', 'istanbull', 'Ankaraa', '3.4', '1%202', 'tr']) {
    test(s, async () => {
      const body = await expectProblem(await t.request(`/api/v1/events/${s}`), 404, 'unknown_city');
      expect(body.suggestions).toBeArray();
      for (const sg of body.suggestions!) expect(sg.url).toBe(`/api/v1/events/${sg.slug}`);
    });
  }

  test('the city parameter gives 400 for the same spellings', async () => {
    for (const s of ['Merkez', 'Kar', '0', '82', 'Constantinople']) {
      await expectProblem(await t.request(`/api/v1/events?city=${s}`), 400, 'unknown_city');
    }
  });
});

test('a valid city with no events is 200 with data: []', async () => {
  const t2 = await testApp();
  try {
    insertEvents(t2.db.db, [eventRow({ plate: 34 }, t2.clock.now)]);
    t2.readModel.refresh();
    const res = await t2.request('/api/v1/events/hakkari');
    expect(res.status).toBe(200);
    const body = (await res.json()) as ListBody;
    expect(body.data).toEqual([]);
    expect(body.pagination).toEqual({ limit: 100, total: 0, next_cursor: null, next: null });
    expect(body.meta.city).toEqual({ slug: 'hakkari', name: PROVINCES[29]!.name, plate: 30 });
  } finally {
    t2.cleanup();
  }
});

import { describe, expect, test } from 'bun:test';
import {
  PROVINCES,
  foldCityKey,
  provinceByPlate,
  provinceBySlug,
  resolveCity,
  suggestCities,
} from '../../src/provinces/index.ts';

// Official names by plate, typed in independently of provinces.json (Ministry of Interior list,
// PROVINCES.md §1.1), so a data regression cannot hide behind tests that read the same file.
const OFFICIAL: readonly string[] = [
  'Adana', 'Adıyaman', 'Afyonkarahisar', 'Ağrı', 'Amasya', 'Ankara', 'Antalya', 'Artvin', 'Aydın', 'Balıkesir',
  'Bilecik', 'Bingöl', 'Bitlis', 'Bolu', 'Burdur', 'Bursa', 'Çanakkale', 'Çankırı', 'Çorum', 'Denizli',
  'Diyarbakır', 'Edirne', 'Elazığ', 'Erzincan', 'Erzurum', 'Eskişehir', 'Gaziantep', 'Giresun', 'Gümüşhane', 'Hakkari',
  'Hatay', 'Isparta', 'Mersin', 'İstanbul', 'İzmir', 'Kars', 'Kastamonu', 'Kayseri', 'Kırklareli', 'Kırşehir',
  'Kocaeli', 'Konya', 'Kütahya', 'Malatya', 'Manisa', 'Kahramanmaraş', 'Mardin', 'Muğla', 'Muş', 'Nevşehir',
  'Niğde', 'Ordu', 'Rize', 'Sakarya', 'Samsun', 'Siirt', 'Sinop', 'Sivas', 'Tekirdağ', 'Tokat',
  'Trabzon', 'Tunceli', 'Şanlıurfa', 'Uşak', 'Van', 'Yozgat', 'Zonguldak', 'Aksaray', 'Bayburt', 'Karaman',
  'Kırıkkale', 'Batman', 'Şırnak', 'Bartın', 'Ardahan', 'Iğdır', 'Yalova', 'Karabük', 'Kilis', 'Osmaniye',
  'Düzce',
];

const OFFICIAL_ENTRIES = OFFICIAL.map((name, i) => [i + 1, name] as const);

/** The spellings a user or a URL may plausibly send for one label. */
function variants(label: string): string[] {
  const nfd = label.normalize('NFD');
  return [
    label,
    label.toUpperCase(),
    label.toLocaleUpperCase('tr'),
    label.toLowerCase(),
    label.toLocaleLowerCase('tr'),
    nfd,
    nfd.toUpperCase(),
    encodeURIComponent(label),
    encodeURIComponent(label.toLocaleUpperCase('tr')),
    `${label}'da`,
    `${label}’nın`,
    `${label}´e`,
    `  ${label}\t`,
    `${label} ili`,
    `${label} Valiliği`,
  ];
}

describe('PROVINCES data', () => {
  test('81 provinces sorted by plate with the official names', () => {
    expect(PROVINCES.length).toBe(81);
    expect(PROVINCES.map((p) => p.plate)).toEqual(OFFICIAL_ENTRIES.map(([plate]) => plate));
    expect(PROVINCES.map((p) => p.name)).toEqual([...OFFICIAL]);
  });

  test('slugs are lower-case [a-z], unique, and round-trip', () => {
    const slugs = new Set<string>();
    for (const p of PROVINCES) {
      expect(p.slug).toMatch(/^[a-z]+$/);
      expect(p.slug).toBe(p.ascii.toLowerCase().replace(/[^a-z]/g, ''));
      slugs.add(p.slug);
      expect(provinceBySlug(p.slug)).toBe(p);
      expect(provinceByPlate(p.plate)).toBe(p);
    }
    expect(slugs.size).toBe(81);
    expect(provinceBySlug('istanbul')?.plate).toBe(34);
    expect(provinceBySlug('sanliurfa')?.plate).toBe(63);
    expect(provinceBySlug('İstanbul')).toBeUndefined();
  });

  test('provinceByPlate rejects out-of-range and non-integer plates', () => {
    for (const v of [0, 82, -1, 1.5, NaN, Infinity]) expect(provinceByPlate(v)).toBeUndefined();
  });

  test('capital lies inside its bbox; 7 regions with the documented counts', () => {
    const counts = new Map<string, number>();
    for (const p of PROVINCES) {
      const [minLon, minLat, maxLon, maxLat] = p.bbox;
      expect(p.lon).toBeGreaterThan(minLon);
      expect(p.lon).toBeLessThan(maxLon);
      expect(p.lat).toBeGreaterThan(minLat);
      expect(p.lat).toBeLessThan(maxLat);
      counts.set(p.region, (counts.get(p.region) ?? 0) + 1);
    }
    expect(Object.fromEntries(counts)).toEqual({
      Marmara: 11,
      Ege: 8,
      Akdeniz: 8,
      'İç Anadolu': 13,
      Karadeniz: 18,
      'Doğu Anadolu': 14,
      'Güneydoğu Anadolu': 9,
    });
  });

  test('exported data is frozen', () => {
    expect(Object.isFrozen(PROVINCES)).toBe(true);
    expect(Object.isFrozen(PROVINCES[0])).toBe(true);
    expect(Object.isFrozen(PROVINCES[0]?.aliases)).toBe(true);
  });
});

describe('foldCityKey', () => {
  test.each([
    ["İstanbul'da", 'istanbul'],
    ['ISTANBUL', 'istanbul'],
    ['İSTANBUL', 'istanbul'],
    ['Şanlıurfa’nın', 'sanliurfa'],
    ['ELAZIĞ', 'elazig'],
    ['Elâzığ', 'elazig'],
    ['Hakkâri', 'hakkari'],
    ['IĞDIR', 'igdir'],
    ['ığdır', 'igdir'],
    ['K. Maraş', 'kmaras'],
    ['afyon-karahisar', 'afyonkarahisar'],
    ['Afyon Karahisar', 'afyonkarahisar'],
    ['İzmir Büyükşehir Belediyesi', 'izmir'],
    ['Ankara ili', 'ankara'],
    ['Konya, Turkey', 'konya'],
    ['Çorum'.normalize('NFD'), 'corum'],
    ['TR-34', 'tr34'],
    ['', ''],
    ['   ', ''],
    ["'da", ''],
    ['il', ''],
  ])('%p → %p', (input, key) => {
    expect(foldCityKey(input)).toBe(key);
  });
});

describe('resolveCity', () => {
  test('every province by its official name in every case, form, encoding and suffix', () => {
    for (const [plate, name] of OFFICIAL_ENTRIES) {
      for (const v of variants(name)) {
        expect({ v, plate: resolveCity(v)?.plate }).toEqual({ v, plate });
      }
    }
  });

  test('every province by its ASCII spelling and slug', () => {
    for (const p of PROVINCES) {
      for (const v of [...variants(p.ascii), ...variants(p.slug)]) {
        expect({ v, plate: resolveCity(v)?.plate }).toEqual({ v, plate: p.plate });
      }
    }
  });

  test('every alias', () => {
    let n = 0;
    for (const p of PROVINCES) {
      for (const alias of p.aliases) {
        for (const v of variants(alias)) {
          expect({ v, plate: resolveCity(v)?.plate }).toEqual({ v, plate: p.plate });
        }
        n++;
      }
    }
    expect(n).toBeGreaterThan(40);
  });

  test.each([
    ['Afyon', 3],
    ['afyon-karahisar', 3],
    ['Afyon Karahisar', 3],
    ['K. Maraş', 46],
    ['K.Maras', 46],
    ['Maraş', 46],
    ['G.Antep', 27],
    ['Antep', 27],
    ['Urfa', 63],
    ['S.Urfa', 63],
    ['İçel', 33],
    ['Icel', 33],
    ['İzmit', 41],
    ['Adapazarı', 54],
    ['Antakya', 31],
    ['Dersim', 62],
    ['Diyarbekir', 21],
    ['Elâzığ', 23],
    ['Hakkâri', 30],
    ['Karaköse', 4],
    ['Seyhan', 1],
    ['ISPARTA', 32],
    ['ısparta', 32],
    ['Istanbul', 34],
    ['%C4%B0stanbul', 34],
    ['%c5%9eanl%c4%b1urfa', 63],
    ['Kahramanmara%C5%9F', 46],
    ['afyon%20karahisar', 3],
    ['İstanbul%27da', 34],
  ])('named form %p → plate %p', (input, plate) => {
    expect(resolveCity(input)?.plate).toBe(plate);
  });

  test('every plate code, zero-padded, bare and with a TR prefix', () => {
    for (let plate = 1; plate <= 81; plate++) {
      const two = String(plate).padStart(2, '0');
      for (const v of [String(plate), two, ` ${plate} `, `TR-${two}`, `tr${two}`, `TR ${plate}`, `0${two}`, `${two}'te`]) {
        expect({ v, plate: resolveCity(v)?.plate }).toEqual({ v, plate });
      }
    }
    expect(resolveCity('34')?.name).toBe('İstanbul');
    expect(resolveCity('06')?.name).toBe('Ankara');
    expect(resolveCity('6')?.name).toBe('Ankara');
    expect(resolveCity('TR-34')?.name).toBe('İstanbul');
  });

  test.each([
    '0',
    '00',
    '82',
    '99',
    '100',
    '-1',
    '3.4',
    '1 2',
    'TR-0',
    'TR-82',
    '',
    ' ',
    "'",
    'Merkez',
    'merkez',
    'Kar',
    'Kara',
    'Constantinople',
    'Smyrna',
    'Angora',
    'Gebze',
    'Alanya',
    'İstanbul Ankara',
    'İstanbull',
    'il',
    'Türkiye',
    'istanbul%00',
    'istanbul\u0000',
    'ist\u0001anbul',
    'ankara%7F',
    'ist\tanbul',
    'ist%0Aanbul',
    '%',
    '%E0%A4%A',
  ])('rejects %p', (input) => {
    expect(resolveCity(input)).toBeNull();
  });

  test('never throws, whatever the string', () => {
    const nasty = [
      '\uD800',
      '\uDFFF',
      'İstanbul\uD800',
      '\uD83D\uDE00',
      '%E0%A4%A',
      '%',
      '%%',
      '%ZZ',
      '%C4',
      '%ED%A0%80', // encoded lone surrogate
      'x'.repeat(10 * 1024),
      '%C4%B0'.repeat(2000),
      'İ'.repeat(10 * 1024),
      'İstanbul'.repeat(1300),
      '\u0000',
      '\u0307'.repeat(100),
      '🇹🇷',
      'ﬁ',
    ];
    // Deterministic pseudo-random UTF-16 soup, including unpaired surrogates and '%' runs.
    let seed = 12345;
    const rnd = (n: number): number => {
      seed = (seed * 1103515245 + 12345) & 0x7fffffff;
      return seed % n;
    };
    for (let i = 0; i < 2000; i++) {
      let s = '';
      const len = rnd(24);
      for (let j = 0; j < len; j++) s += rnd(5) === 0 ? '%' : String.fromCharCode(rnd(0x10000));
      nasty.push(s);
    }
    for (const s of nasty) {
      expect(() => resolveCity(s)).not.toThrow();
      expect(() => suggestCities(s)).not.toThrow();
      expect(() => foldCityKey(s)).not.toThrow();
    }
    // JavaScript callers may bypass the type; the API promises null, not a TypeError.
    expect(resolveCity(undefined as unknown as string)).toBeNull();
    expect(resolveCity(34 as unknown as string)).toBeNull();
  });

  test('10 KB input is rejected quickly', () => {
    const big = 'a'.repeat(10 * 1024);
    const t0 = performance.now();
    for (let i = 0; i < 100; i++) {
      resolveCity(big);
      suggestCities(big);
    }
    expect(performance.now() - t0).toBeLessThan(500);
  });
});

describe('suggestCities', () => {
  test('misspellings put the intended province first', () => {
    expect(suggestCities('istambul')[0]?.name).toBe('İstanbul');
    expect(suggestCities('ankra')[0]?.name).toBe('Ankara');
    expect(suggestCities('Eskisehr')[0]?.name).toBe('Eskişehir');
    expect(suggestCities('diyarbekr')[0]?.name).toBe('Diyarbakır');
    expect(suggestCities('Kahramanmaras')[0]?.name).toBe('Kahramanmaraş');
  });

  test('nothing close → []', () => {
    expect(suggestCities('xyzxyzxyz')).toEqual([]);
    expect(suggestCities('Constantinople')).toEqual([]);
    expect(suggestCities('')).toEqual([]);
    expect(suggestCities("'")).toEqual([]);
    expect(suggestCities('ili')).toEqual([]);
  });

  /** Plain full-matrix edit distance: the reference the module's pruned version is checked against. */
  function editDistance(a: string, b: string): number {
    const d: number[][] = Array.from({ length: a.length + 1 }, (_, i) =>
      Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)),
    );
    for (let i = 1; i <= a.length; i++) {
      for (let j = 1; j <= b.length; j++) {
        d[i]![j] = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
      }
    }
    return d[a.length]![b.length]!;
  }

  function reference(input: string, max: number): number[] {
    const key = foldCityKey(input);
    if (!key) return [];
    const limit = Math.max(2, Math.floor(key.length * 0.4));
    return PROVINCES.map((p) => ({
      plate: p.plate,
      d: Math.min(...[p.name, p.ascii, ...p.aliases].map((l) => editDistance(key, foldCityKey(l)))),
    }))
      .filter((x) => x.d <= limit)
      .sort((x, y) => x.d - y.d || x.plate - y.plate)
      .slice(0, max)
      .map((x) => x.plate);
  }

  test.each(['kar', 'bilis', 'van', 'mus', 'ordu', 'bartn', 'sirnk', 'agr', 'izmt', 'kilis', 'amasra', 'antalia', 'tokar'])(
    '%p: nearest first, ties by plate, each province once, capped at max',
    (input) => {
      for (const max of [1, 3, 81]) {
        const got = suggestCities(input, max).map((p) => p.plate);
        expect(got).toEqual(reference(input, max));
        expect(new Set(got).size).toBe(got.length);
      }
      expect(suggestCities(input).map((p) => p.plate)).toEqual(reference(input, 3));
    },
  );

  test('candidates at the same distance come back in plate order', () => {
    // "bilis" is one edit from both Bitlis (13, insert t) and Kilis (79, b→k).
    expect(suggestCities('bilis').slice(0, 2).map((p) => p.name)).toEqual(['Bitlis', 'Kilis']);
    expect(suggestCities('kilis').map((p) => p.name)).toEqual(['Kilis', 'Bitlis']);
  });

  test('max below 1 → []', () => {
    expect(suggestCities('kar', 0)).toEqual([]);
    expect(suggestCities('kar', -5)).toEqual([]);
    expect(suggestCities('kar', NaN)).toEqual([]);
  });

  test('an exact name is its own best suggestion', () => {
    for (const p of PROVINCES) expect(suggestCities(p.name)[0]).toBe(p);
  });
});

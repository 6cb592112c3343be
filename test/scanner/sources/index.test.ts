import { afterAll, describe, expect, test } from 'bun:test';
import {
  createSources,
  DEFAULT_TIMEOUT_MS,
  HereSource,
  ReplaySource,
  SourceConfigError,
  TomTomSource,
  WazeSource,
  type Source,
} from '../../../src/scanner/sources/index.ts';
import { FIXTURES_DIR, manualClock, recordingSleep, startFakeUpstream } from '../../helpers/fake-upstream.ts';
import { thrown } from '../../helpers/thrown.ts';

const up = startFakeUpstream();
afterAll(() => up.stop());

const configError = (fn: () => unknown): SourceConfigError => thrown(SourceConfigError, fn);

describe('createSources', () => {
  test('builds the configured sources in order, once each', () => {
    const sources = createSources({
      sources: ['tomtom', 'waze', 'here', 'replay', 'waze'],
      tomtomApiKey: 'k1',
      hereApiKey: 'k2',
      replayDir: FIXTURES_DIR,
    });
    expect(sources.map((s) => s.name)).toEqual(['tomtom', 'waze', 'here', 'replay']);
    expect(sources[0]).toBeInstanceOf(TomTomSource);
    expect(sources[1]).toBeInstanceOf(WazeSource);
    expect(sources[2]).toBeInstanceOf(HereSource);
    expect(sources[3]).toBeInstanceOf(ReplaySource);
    expect(sources.map((s) => s.concurrency)).toEqual([4, 2, 4, 8]);
    for (const s of sources) expect(s.status().state).toBe('ok');
  });

  test('default URLs follow CONTRACT §8', () => {
    const [waze, tomtom, here] = createSources({ sources: ['waze', 'tomtom', 'here'], tomtomApiKey: 'k', hereApiKey: 'h' });
    expect((waze as WazeSource).url([1, 2, 3, 4]).origin + (waze as WazeSource).url([1, 2, 3, 4]).pathname).toBe(
      'https://www.waze.com/live-map/api/georss',
    );
    expect((tomtom as TomTomSource).url([1, 2, 3, 4]).href).toStartWith(
      'https://api.tomtom.com/traffic/services/5/incidentDetails?key=k&',
    );
    expect((here as HereSource).url([1, 2, 3, 4]).href).toStartWith('https://data.traffic.hereapi.com/v7/incidents?in=bbox:1,2,3,4');
    expect(DEFAULT_TIMEOUT_MS).toBe(10_000);
  });

  test('missing keys or replay dir, unknown names, bad URLs → a SourceConfigError naming the variable', () => {
    expect(configError(() => createSources({ sources: ['tomtom'] })).variable).toBe('TOMTOM_API_KEY');
    expect(configError(() => createSources({ sources: ['here'], hereApiKey: '  ' })).variable).toBe('HERE_API_KEY');
    expect(configError(() => createSources({ sources: ['replay'] })).variable).toBe('REPLAY_DIR');
    expect(configError(() => createSources({ sources: [] })).variable).toBe('SOURCES');
    // A value from an untyped environment.
    const bogus = ['bing'] as unknown as ['waze'];
    expect(configError(() => createSources({ sources: bogus })).message).toContain('bing');
    expect(configError(() => createSources({ sources: ['waze'], wazeUrl: 'ftp://x' })).variable).toBe('WAZE_URL');
    expect(configError(() => createSources({ sources: ['waze'], timeoutMs: 0 })).variable).toBe('timeoutMs');
  });

  test('base URL, timeout, clock and sleep reach the adapters', async () => {
    const clock = manualClock();
    const sleeper = recordingSleep();
    up.route('/georss', { status: 502 }, { status: 403 });
    up.route('/tt', { delayMs: 300, json: { incidents: [] } });
    const sources: Source[] = createSources(
      { sources: ['waze', 'tomtom'], wazeUrl: up.url('/georss'), tomtomUrl: up.url('/tt'), tomtomApiKey: 'secret-key-1', timeoutMs: 50 },
      { now: clock.now, sleep: sleeper.sleep, random: () => 0 },
    );
    const [waze, tomtom] = sources;
    const w = await waze?.fetchCell({ id: 'a', bbox: [28, 40, 29, 41] });
    expect(w?.ok === false && w.kind).toBe('blocked'); // 502, retried after the injected sleep, then 403
    expect(sleeper.calls).toHaveLength(1);
    expect(waze?.status().until).toBe(clock.now() + 60_000);
    const t = await tomtom?.fetchCell({ id: 'a', bbox: [28, 40, 29, 41] });
    expect(t?.ok === false && t.kind).toBe('timeout');
  });
});

describe('every HTTP source', () => {
  test('JSON that is not an object is a parse failure of the cell naming the upstream, with no back-off', async () => {
    up.route('/not-an-object', { json: [1, 2, 3] });
    const deps = { baseUrl: up.url('/not-an-object'), timeoutMs: 150, now: manualClock().now, sleep: async () => {}, random: () => 0 };
    const cell = { id: 'ist', bbox: [28.5, 40.8, 29.4, 41.3] as [number, number, number, number] };
    const sources: [Source, string][] = [
      [new WazeSource(deps), 'Waze'],
      [new TomTomSource({ ...deps, apiKey: 'k' }), 'TomTom'],
      [new HereSource({ ...deps, apiKey: 'k' }), 'HERE'],
    ];
    for (const [source, label] of sources) {
      const r = await source.fetchCell(cell);
      expect(r).toEqual({ ok: false, kind: 'parse', error: `${label} answered JSON that is not an object`, requests: 1 });
      expect(source.status().state).toBe('ok');
    }
  });
});

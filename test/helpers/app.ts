import { ChangeFeed } from '../../src/stream/feed.ts';
import { StreamHub } from '../../src/modules/stream/service.ts';
import { KeyStore } from '../../src/keys/store.ts';
import { createApp, type App, type AppDeps } from '../../src/http/app.ts';
import type { Clock } from '../../src/clock.ts';
import { silentLogger } from '../../src/log.ts';
import { checkHealth, type ScanLoopView } from '../../src/modules/health/service.ts';
import { ReadModel } from '../../src/read-model/read-model.ts';
import { sqliteWindowSource } from '../../src/read-model/load-window.ts';
import { tempDb, type TempDb } from './db.ts';

export interface TestApp {
  app: App;
  db: TempDb;
  readModel: ReadModel;
  /** The outbox feed behind the live stream: call poll() after writing changes. */
  feed: ChangeFeed;
  streams: StreamHub;
  /** Mutable fake clock (epoch ms). */
  clock: { now: number };
  loop: ScanLoopView;
  /** `app.handle` with a full URL built from a path. */
  request(path: string, init?: RequestInit): Promise<Response>;
  cleanup(): void;
}

/** The real app over a real migrated SQLite file, a fake clock and a fake scan-loop view. */
export async function testApp(opts: { now?: number; historyDays?: number; gate?: (deps: { db: TempDb; clock: Clock }) => AppDeps['gate'] } = {}): Promise<TestApp> {
  const db = tempDb();
  const clockState = { now: opts.now ?? Date.parse('2026-11-21T10:00:00Z') };
  const clock: Clock = () => clockState.now;
  const readModel = new ReadModel(sqliteWindowSource(db.sqlite), clock, 90);
  const loop: ScanLoopView = { sources: ['waze'], intervalSeconds: 90, nextScanAt: () => null, sourceStatuses: () => [] };
  const startedAt = clockState.now;
  const feed = new ChangeFeed(db.sqlite);
  // A short reconnect hint keeps resume tests fast; production sends 5 s.
  const keyStore = new KeyStore(db.sqlite);
  const streams = new StreamHub(feed, 100, (keyId) => keyStore.isActiveEnterprise(keyId));
  const app = createApp({
    readModel,
    streams,
    sqlite: db.sqlite,
    historyDays: opts.historyDays ?? 90,
    clock,
    logger: silentLogger,
    release: 'test',
    publicUrl: '',
    gate: opts.gate?.({ db, clock }),
    health: () => checkHealth({ db: db.db, clock, startedAt, release: 'test', loop, activeEvents: () => readModel.activeCount }),
  });
  await app.modules;
  return {
    app,
    db,
    readModel,
    clock: clockState,
    loop,
    request: (path, init) => app.handle(new Request(`http://localhost${path}`, init)),
    feed,
    streams,
    cleanup: () => {
      streams.closeAll();
      db.cleanup();
    },
  };
}

/**
 * The scanner's thread. The whole scan — upstream requests, JSON parsing, point-in-polygon,
 * the diff and the long write transaction with its WAL checkpoint — runs here on the worker's
 * own connection, so the HTTP thread only ever serves requests and swaps in the rebuilt view.
 * It must be listed as an entry point of `bun build --compile` (scripts/build.ts).
 */
import { systemClock } from '../clock.ts';
import { openDatabase, type OpenedDb } from '../db/client.ts';
import { createLogger, errorText } from '../log.ts';
import { buildSources, scanAndPurge } from '../commands/runtime.ts';
import type { Source } from './sources/source.ts';
import type { FromWorker, ToWorker } from './worker-protocol.ts';

declare const self: Worker;

let writer: OpenedDb | null = null;
let sources: Source[] = [];
let inflight: Promise<void> | null = null;
const abort = new AbortController();
const post = (m: FromWorker) => self.postMessage(m);
const statuses = () => sources.map((s) => s.status());

self.onmessage = (e: MessageEvent<ToWorker>) => {
  const msg = e.data;
  if (msg.type === 'init') {
    try {
      const config = msg.config;
      const logger = createLogger(config.logLevel);
      sources = buildSources(config, systemClock);
      writer = openDatabase(config.databasePath);
      const w = writer;
      self.onmessage = (ev: MessageEvent<ToWorker>) => {
        const m = ev.data;
        if (m.type === 'scan') {
          inflight ??= scanAndPurge({ writer: w, sources, config, logger, clock: systemClock, signal: abort.signal })
            .then((summary) => post({ type: 'done', summary, statuses: statuses() }))
            .catch((err) => post({ type: 'failed', error: errorText(err), statuses: statuses() }))
            .finally(() => {
              inflight = null;
              // A scan leaves ~60–120 MB of parsed responses and row maps behind; nothing else in
              // this thread would trigger a collection until the next scan, so RSS kept growing.
              setTimeout(() => Bun.gc(true), 0);
            });
        } else if (m.type === 'stop') {
          abort.abort();
          void (async () => {
            await inflight;
            w.sqlite.close();
            post({ type: 'stopped' });
          })();
        }
      };
      post({ type: 'ready', statuses: statuses() });
    } catch (err) {
      post({ type: 'init-failed', error: errorText(err) });
    }
  }
};

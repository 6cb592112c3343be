/**
 * The upstream source adapters: build the configured list, and re-export the contract, the pure
 * parsers and the building blocks. See ./README.md for the mapping decisions.
 */
import { SOURCE_NAMES, type SourceName } from '../../domain/event.ts';
import type { HttpSourceDeps } from './core.ts';
import type { SleepFn } from './http.ts';
import { HERE_DEFAULT_URL, HereSource } from './here.ts';
import { ReplaySource } from './replay.ts';
import type { Source } from './source.ts';
import { TOMTOM_DEFAULT_URL, TomTomSource } from './tomtom.ts';
import { WAZE_DEFAULT_URL, WazeSource } from './waze.ts';

export type { BBox, Cell, CellFailureKind, CellResult, Source, SourceStatus } from './source.ts';
export { SourceBackoff, type BackoffOptions, type BackoffState } from './backoff.ts';
export {
  fetchJson,
  parseRetryAfter,
  redact,
  type FetchJsonFailure,
  type FetchJsonOptions,
  type FetchJsonResult,
  type FetchJsonSuccess,
  type HttpFailureKind,
  type SleepFn,
} from './http.ts';
export type { HttpSourceDeps } from './core.ts';
export {
  WAZE_ALERT_CAP,
  WAZE_DEFAULT_URL,
  WAZE_JAM_CONFIDENCE,
  WAZE_JAM_MERGE_RADIUS_M,
  WAZE_MAJOR_MIN_RELIABILITY,
  WAZE_MAX_SPLIT_DEPTH,
  WAZE_MIN_RELIABILITY,
  WazeSource,
  createWazeSource,
  parseWaze,
  parseWazeResponse,
  wazeConfidence,
  wazeDistrict,
  wazeLevelSeverity,
  type WazeParseResult,
  type WazeSourceOptions,
  type WazeSplitNode,
} from './waze.ts';
export {
  TOMTOM_DEFAULT_URL,
  TOMTOM_FIELDS,
  TomTomSource,
  createTomTomSource,
  parseTomTom,
  tomtomConfidence,
  tomtomSeverity,
  type TomTomSourceOptions,
} from './tomtom.ts';
export {
  HERE_CONFIDENCE,
  HERE_DEFAULT_URL,
  HereSource,
  createHereSource,
  hereSeverity,
  parseHere,
  type HereSourceOptions,
} from './here.ts';
export {
  REPLAY_KINDS,
  ReplaySource,
  createReplaySource,
  parseRecording,
  type ReplayKind,
  type ReplayLoad,
  type ReplaySourceOptions,
} from './replay.ts';
export { dedupeItems, inBBox, quadrants } from './util.ts';

/** Default per-request timeout. */
export const DEFAULT_TIMEOUT_MS = 10_000;

/** What `createSources` needs from the service configuration (CONTRACT §8). */
export interface SourcesConfig {
  /** `SOURCES`, in order; duplicates are ignored. */
  sources: readonly SourceName[];
  /** `WAZE_URL`, default {@link WAZE_DEFAULT_URL}. */
  wazeUrl?: string | null;
  /** `TOMTOM_URL`, default {@link TOMTOM_DEFAULT_URL}. */
  tomtomUrl?: string | null;
  /** `TOMTOM_API_KEY`, required with `tomtom`. */
  tomtomApiKey?: string | null;
  /** `HERE_URL`, default {@link HERE_DEFAULT_URL}. */
  hereUrl?: string | null;
  /** `HERE_API_KEY`, required with `here`. */
  hereApiKey?: string | null;
  /** `REPLAY_DIR`, required with `replay`. */
  replayDir?: string | null;
  /** Per-request timeout, default {@link DEFAULT_TIMEOUT_MS}. */
  timeoutMs?: number;
}

export interface SourcesDeps {
  /** Clock (epoch ms) for back-off; default `Date.now`. */
  now?: () => number;
  /** Sleep before a retry; default `Bun.sleep`. Tests pass a no-op. */
  sleep?: SleepFn;
  /** 0 ≤ x < 1 for the retry jitter; default `Math.random`. */
  random?: () => number;
}

/** A configuration problem, naming the environment variable at fault. */
export class SourceConfigError extends Error {
  constructor(
    readonly variable: string,
    message: string,
  ) {
    super(message);
    this.name = 'SourceConfigError';
  }
}

function required(value: string | null | undefined, variable: string, source: SourceName): string {
  const v = value?.trim();
  if (!v) throw new SourceConfigError(variable, `${variable} is required when SOURCES includes ${source}`);
  return v;
}

function baseUrl(value: string | null | undefined, fallback: string, variable: string): string {
  const v = value?.trim() || fallback;
  try {
    const u = new URL(v);
    if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new Error('not http(s)');
  } catch {
    throw new SourceConfigError(variable, `${variable} must be an http(s) URL`);
  }
  return v;
}

/**
 * Build the configured sources, in the configured order. Throws {@link SourceConfigError} for an
 * unknown name, a missing key or replay directory, or a bad URL or timeout.
 */
export function createSources(config: SourcesConfig, deps: SourcesDeps = {}): Source[] {
  const timeoutMs = config.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  if (!Number.isFinite(timeoutMs) || timeoutMs <= 0) {
    throw new SourceConfigError('timeoutMs', 'the source timeout must be a positive number of milliseconds');
  }
  const http: HttpSourceDeps = {
    now: deps.now ?? Date.now,
    sleep: deps.sleep ?? ((ms) => Bun.sleep(ms)),
    random: deps.random ?? Math.random,
    timeoutMs,
  };
  if (config.sources.length === 0) throw new SourceConfigError('SOURCES', 'SOURCES must name at least one source');
  const out: Source[] = [];
  const done = new Set<SourceName>();
  for (const name of config.sources) {
    if (!(SOURCE_NAMES as readonly string[]).includes(name)) {
      throw new SourceConfigError('SOURCES', `SOURCES: unknown source "${String(name)}" (use ${SOURCE_NAMES.join(', ')})`);
    }
    if (done.has(name)) continue;
    done.add(name);
    switch (name) {
      case 'waze':
        out.push(new WazeSource({ ...http, baseUrl: baseUrl(config.wazeUrl, WAZE_DEFAULT_URL, 'WAZE_URL') }));
        break;
      case 'tomtom':
        out.push(
          new TomTomSource({
            ...http,
            apiKey: required(config.tomtomApiKey, 'TOMTOM_API_KEY', 'tomtom'),
            baseUrl: baseUrl(config.tomtomUrl, TOMTOM_DEFAULT_URL, 'TOMTOM_URL'),
          }),
        );
        break;
      case 'here':
        out.push(
          new HereSource({
            ...http,
            apiKey: required(config.hereApiKey, 'HERE_API_KEY', 'here'),
            baseUrl: baseUrl(config.hereUrl, HERE_DEFAULT_URL, 'HERE_URL'),
          }),
        );
        break;
      case 'replay':
        out.push(new ReplaySource({ dir: required(config.replayDir, 'REPLAY_DIR', 'replay') }));
        break;
    }
  }
  return out;
}

import { statSync } from 'node:fs';
import { SOURCE_NAMES, type SourceName } from './domain/event.ts';
import { parseRange } from './limits/client-ip.ts';

export type LogLevel = 'debug' | 'info' | 'warn' | 'error';

export interface Config {
  port: number;
  host: string;
  databasePath: string;
  sources: SourceName[];
  wazeUrl: string;
  tomtomUrl: string;
  tomtomApiKey: string | null;
  hereUrl: string;
  hereApiKey: string | null;
  replayDir: string | null;
  scanIntervalSeconds: number;
  /** Raw entries; the limits module parses them into matchers. */
  trustProxy: string[];
  rateLimitPerMinute: number;
  freeMonthlyQuota: number;
  historyDays: number;
  webhookAllowPrivate: boolean;
  logLevel: LogLevel;
  /** Absolute base URL for problem `type` links; empty = derive from each request's origin. */
  publicUrl: string;
}

/** A bad configuration value: the message names the variable, the process exits 2. */
export class ConfigError extends Error {
  constructor(
    readonly variable: string,
    message: string,
  ) {
    super(`${variable}: ${message}`);
    this.name = 'ConfigError';
  }
}

type Env = Record<string, string | undefined>;

function str(env: Env, name: string, fallback: string): string {
  const v = env[name];
  return v === undefined || v.trim() === '' ? fallback : v.trim();
}

function int(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw.trim() === '') return fallback;
  const s = raw.trim();
  if (!/^\d+$/.test(s)) throw new ConfigError(name, `expected a whole number from ${min} to ${max}, got '${s}'`);
  const n = Number(s);
  if (n < min || n > max) throw new ConfigError(name, `expected a whole number from ${min} to ${max}, got ${n}`);
  return n;
}

function bool(env: Env, name: string, fallback: boolean): boolean {
  const raw = env[name];
  if (raw === undefined || raw.trim() === '') return fallback;
  const s = raw.trim().toLowerCase();
  if (['true', '1', 'yes', 'on'].includes(s)) return true;
  if (['false', '0', 'no', 'off'].includes(s)) return false;
  throw new ConfigError(name, `expected true or false, got '${raw.trim()}'`);
}

function url(env: Env, name: string, fallback: string): string {
  const s = str(env, name, fallback);
  let parsed: URL;
  try {
    parsed = new URL(s);
  } catch {
    throw new ConfigError(name, `expected an http(s) URL, got '${s}'`);
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
    throw new ConfigError(name, `expected an http(s) URL, got '${s}'`);
  }
  return s;
}

function list(env: Env, name: string): string[] {
  const raw = env[name];
  if (raw === undefined) return [];
  return raw
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
}

const LOG_LEVELS: readonly LogLevel[] = ['debug', 'info', 'warn', 'error'];

/** Parses the environment once at start; every problem is reported as a ConfigError. */
export function loadConfig(env: Env = process.env): Config {
  const sourcesRaw = env.SOURCES === undefined || env.SOURCES.trim() === '' ? ['waze'] : list(env, 'SOURCES');
  const sources: SourceName[] = [];
  for (const s of sourcesRaw) {
    const name = s.toLowerCase();
    if (!(SOURCE_NAMES as readonly string[]).includes(name)) {
      throw new ConfigError('SOURCES', `unknown source '${s}' (expected a comma list of ${SOURCE_NAMES.join(', ')})`);
    }
    if (!sources.includes(name as SourceName)) sources.push(name as SourceName);
  }
  if (sources.length === 0) throw new ConfigError('SOURCES', 'at least one source is required');

  const tomtomApiKey = env.TOMTOM_API_KEY?.trim() || null;
  const hereApiKey = env.HERE_API_KEY?.trim() || null;
  const replayDir = env.REPLAY_DIR?.trim() || null;
  if (sources.includes('tomtom') && !tomtomApiKey) throw new ConfigError('TOMTOM_API_KEY', 'required when SOURCES includes tomtom');
  if (sources.includes('here') && !hereApiKey) throw new ConfigError('HERE_API_KEY', 'required when SOURCES includes here');
  if (sources.includes('replay') && !replayDir) throw new ConfigError('REPLAY_DIR', 'required when SOURCES includes replay');
  if (sources.includes('replay') && replayDir && !isDirectory(replayDir)) throw new ConfigError('REPLAY_DIR', `'${replayDir}' is not a folder`);

  const logLevel = str(env, 'LOG_LEVEL', 'info').toLowerCase();
  if (!(LOG_LEVELS as readonly string[]).includes(logLevel)) {
    throw new ConfigError('LOG_LEVEL', `expected one of ${LOG_LEVELS.join(', ')}, got '${env.LOG_LEVEL}'`);
  }

  const trustProxy = list(env, 'TRUST_PROXY');
  for (const entry of trustProxy) {
    // The limiter's own parser, so what starts is exactly what the limiter understands.
    if (parseRange(entry) === null) throw new ConfigError('TRUST_PROXY', `'${entry}' is not an IP address or CIDR range`);
  }

  const host = str(env, 'HOST', '0.0.0.0');
  if (!isHost(host)) throw new ConfigError('HOST', `expected an IP address or a host name, got '${host}'`);
  const publicUrl = env.PUBLIC_URL?.trim() ? url(env, 'PUBLIC_URL', '').replace(/\/+$/, '') : '';
  if (publicUrl !== '' && (publicUrl.includes('?') || publicUrl.includes('#'))) {
    throw new ConfigError('PUBLIC_URL', `expected a base URL without query or fragment, got '${publicUrl}'`);
  }

  return Object.freeze({
    port: int(env, 'PORT', 3000, 0, 65535),
    host,
    databasePath: str(env, 'DATABASE_PATH', './data/trafik.db'),
    sources,
    wazeUrl: url(env, 'WAZE_URL', 'https://www.waze.com/live-map/api/georss'),
    tomtomUrl: url(env, 'TOMTOM_URL', 'https://api.tomtom.com/traffic/services/5/incidentDetails'),
    tomtomApiKey,
    hereUrl: url(env, 'HERE_URL', 'https://data.traffic.hereapi.com/v7/incidents'),
    hereApiKey,
    replayDir,
    scanIntervalSeconds: int(env, 'SCAN_INTERVAL_SECONDS', 90, 1, 86_400),
    trustProxy,
    rateLimitPerMinute: int(env, 'RATE_LIMIT_PER_MINUTE', 60, 1, 1_000_000),
    freeMonthlyQuota: int(env, 'FREE_MONTHLY_QUOTA', 1000, 1, 1_000_000_000),
    historyDays: int(env, 'HISTORY_DAYS', 90, 1, 3650),
    webhookAllowPrivate: bool(env, 'WEBHOOK_ALLOW_PRIVATE', false),
    logLevel: logLevel as LogLevel,
    publicUrl,
  });
}

function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

/** An IPv4 address, an IPv6 address, or a DNS host name. */
function isHost(h: string): boolean {
  if (/^\d{1,3}(\.\d{1,3}){3}$/.test(h)) return h.split('.').every((o) => Number(o) <= 255);
  if (h.includes(':')) return parseRange(h) !== null;
  return /^(?=.{1,253}$)[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$/.test(h);
}

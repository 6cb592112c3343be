/**
 * A real local HTTP server standing in for an upstream (Waze, TomTom, HERE) in tests: it serves
 * recorded payloads from test/fixtures/upstream, status codes, HTML walls, truncated JSON and
 * slow answers, and it records every request. Nothing here mocks `fetch` or touches the internet.
 */
import { join } from 'node:path';

export const FIXTURES_DIR = join(import.meta.dir, '..', 'fixtures', 'upstream');

export interface FakeRequest {
  url: URL;
  path: string;
  query: URLSearchParams;
  headers: Headers;
}

export interface FakeReply {
  /** Default 200. */
  status?: number;
  headers?: Record<string, string>;
  /** Serialised as `application/json`. */
  json?: unknown;
  /** A fixture file name under test/fixtures/upstream, served as `application/json`. */
  file?: string;
  /** Served as `text/html; charset=utf-8`. */
  html?: string;
  /** A raw body; its Content-Type comes from `headers` (Bun's `text/plain` otherwise). */
  body?: string;
  /** Serve only the first N characters of the body (a cut-off answer). */
  truncate?: number;
  /** Wait this long before answering. */
  delayMs?: number;
}

export type FakeHandler = FakeReply | ((req: FakeRequest) => FakeReply | Promise<FakeReply>);

export interface FakeUpstream {
  /** `http://127.0.0.1:<port>` */
  readonly origin: string;
  /** Every request received, in order. */
  readonly requests: FakeRequest[];
  /** The most requests for `path` that were being answered at the same time. */
  maxInFlight(path: string): number;
  /** The full URL of a path on this server. */
  url(path: string): string;
  /**
   * Answer `path` with `handlers` in sequence: the first request gets the first, and so on; the
   * last one repeats. Replaces earlier handlers for the path.
   */
  route(path: string, ...handlers: FakeHandler[]): void;
  /** Requests received for `path` (all paths when omitted). */
  count(path?: string): number;
  /** Forget recorded requests (routes stay). */
  clearRequests(): void;
  stop(): Promise<void>;
}

export function fixturePath(name: string): string {
  return join(FIXTURES_DIR, name);
}

export async function readFixture(name: string): Promise<unknown> {
  return JSON.parse(await Bun.file(fixturePath(name)).text());
}

async function render(reply: FakeReply): Promise<Response> {
  if (reply.delayMs) await Bun.sleep(reply.delayMs);
  const headers = new Headers(reply.headers);
  let body = '';
  if (reply.file !== undefined) {
    body = await Bun.file(fixturePath(reply.file)).text();
    if (!headers.has('content-type')) headers.set('content-type', 'application/json; charset=utf-8');
  } else if (reply.json !== undefined) {
    body = JSON.stringify(reply.json);
    if (!headers.has('content-type')) headers.set('content-type', 'application/json; charset=utf-8');
  } else if (reply.html !== undefined) {
    body = reply.html;
    if (!headers.has('content-type')) headers.set('content-type', 'text/html; charset=utf-8');
  } else if (reply.body !== undefined) {
    body = reply.body;
  }
  if (reply.truncate !== undefined) body = body.slice(0, reply.truncate);
  return new Response(body, { status: reply.status ?? 200, headers });
}

export function startFakeUpstream(): FakeUpstream {
  const routes = new Map<string, { handlers: FakeHandler[]; next: number }>();
  const requests: FakeRequest[] = [];
  const inFlight = new Map<string, number>();
  const maxInFlight = new Map<string, number>();

  const server = Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    async fetch(request) {
      const url = new URL(request.url);
      const req: FakeRequest = { url, path: url.pathname, query: url.searchParams, headers: request.headers };
      requests.push(req);
      const now = (inFlight.get(url.pathname) ?? 0) + 1;
      inFlight.set(url.pathname, now);
      maxInFlight.set(url.pathname, Math.max(maxInFlight.get(url.pathname) ?? 0, now));
      try {
        const route = routes.get(url.pathname);
        if (!route || route.handlers.length === 0) {
          return Response.json({ error: `no fake route for ${url.pathname}` }, { status: 404 });
        }
        const handler = route.handlers[Math.min(route.next, route.handlers.length - 1)];
        route.next++;
        if (handler === undefined) return Response.json({ error: 'no handler' }, { status: 404 });
        const reply = typeof handler === 'function' ? await handler(req) : handler;
        return await render(reply);
      } finally {
        inFlight.set(url.pathname, (inFlight.get(url.pathname) ?? 1) - 1);
      }
    },
  });
  const origin = `http://127.0.0.1:${server.port}`;

  return {
    origin,
    requests,
    maxInFlight: (path) => maxInFlight.get(path) ?? 0,
    url: (path) => `${origin}${path}`,
    route(path, ...handlers) {
      routes.set(path, { handlers, next: 0 });
    },
    count: (path) => (path === undefined ? requests.length : requests.filter((r) => r.path === path).length),
    clearRequests() {
      requests.length = 0;
      maxInFlight.clear();
    },
    stop: () => server.stop(true),
  };
}

/** A URL on a local port where nothing listens (connection refused). */
export async function refusedUrl(path = '/'): Promise<string> {
  const probe = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: () => new Response('') });
  const port = probe.port;
  await probe.stop(true);
  return `http://127.0.0.1:${port}${path}`;
}

/** A clock tests move by hand. */
export interface ManualClock {
  now: () => number;
  advance(ms: number): void;
  set(ms: number): void;
}

export function manualClock(start = Date.UTC(2026, 10, 21, 10, 0, 0)): ManualClock {
  let t = start;
  return {
    now: () => t,
    advance(ms) {
      t += ms;
    },
    set(ms) {
      t = ms;
    },
  };
}

/** A sleep that returns at once and remembers what it was asked for. */
export function recordingSleep(): { sleep: (ms: number) => Promise<void>; calls: number[] } {
  const calls: number[] = [];
  return {
    calls,
    sleep: async (ms) => {
      calls.push(ms);
    },
  };
}

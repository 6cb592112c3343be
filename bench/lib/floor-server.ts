/**
 * The floor: the least a server can do per request and still answer GET /api/v1/events as
 * CONTRACT §1/§4 require — the client's address from the socket (and from X-Forwarded-For behind
 * the trusted proxy), the headers a full implementation must read (request id, key, conditional
 * request, content negotiation — a request with a key just gets a bare 401, as the benchmark sends
 * none), a per-client count, and the same response headers trafik sends
 * with their per-request values. No framework, no validation, no sliding window (a plain counter
 * per minute), no quota store, no key check; cached header sets wherever the values allow.
 * Nothing that does the whole job can be cheaper, so `floor / raw` bounds any `trafik / raw`.
 *
 *   bun bench/lib/floor-server.ts <port> <limit-per-minute> <trusted-proxy> <page-body> <page-headers.json> <429-body> <429-headers.json>
 *
 * The header files are the headers trafik sent (bench/limits.ts records them); the 429 body's
 * request id is replaced per request.
 */
import { readFileSync } from 'node:fs';

const [port, limitArg, trusted, pageFile, pageHeadersFile, refusedFile, refusedHeadersFile] = process.argv.slice(2) as [string, string, string, string, string, string, string];
const page = new Blob([await Bun.file(pageFile).bytes()]);
const pageHeaders = JSON.parse(readFileSync(pageHeadersFile, 'utf8')) as Record<string, string>;
const refusedHeaders = JSON.parse(readFileSync(refusedHeadersFile, 'utf8')) as Record<string, string>;
const refused = readFileSync(refusedFile, 'utf8');
const idAt = refused.indexOf('"request_id":"') + '"request_id":"'.length;
const head = refused.slice(0, idAt);
const tail = refused.slice(refused.indexOf('"', idAt));

const etag = pageHeaders.etag ?? '';
const LIMIT = Number(limitArg);
const QUOTA = 1000;
const counts = new Map<string, number>();
const quotas = new Map<string, number>();
let minute = 0;
let n = 0;
let refusedInit: { status: number; headers: Headers } | null = null;
let refusedFor = -1;

function refusedInitFor(second: number, windowEnd: number): { status: number; headers: Headers } {
  if (refusedInit !== null && refusedFor === second) return refusedInit;
  const headers = new Headers(refusedHeaders);
  headers.set('x-ratelimit-reset', String(windowEnd / 1000));
  headers.set('ratelimit', `"ip-minute";r=0;t=${Math.max(1, windowEnd / 1000 - second)}`);
  refusedFor = second;
  refusedInit = { status: 429, headers };
  return refusedInit;
}

Bun.serve({
  port: Number(port),
  hostname: '127.0.0.1',
  routes: {
    '/api/v1/events': {
      GET: (req, server) => {
        const now = Date.now();
        const m = Math.floor(now / 60_000);
        if (m !== minute) {
          minute = m;
          counts.clear();
        }
        const h = req.headers;
        const peer = server.requestIP(req)?.address ?? '';
        const xff = peer === trusted ? h.get('x-forwarded-for') : null;
        const client = xff === null ? peer : xff.slice(xff.lastIndexOf(',') + 1).trim();
        const id = h.get('x-request-id') ?? `req_${++n}`;
        const used = counts.get(client) ?? 0;
        const windowEnd = (m + 1) * 60_000;
        if (used >= LIMIT) {
          const res = new Response(head + id + tail, refusedInitFor(Math.floor(now / 1000), windowEnd));
          res.headers.set('x-request-id', id);
          return res;
        }
        counts.set(client, used + 1);
        if (h.get('authorization') !== null || h.get('x-api-key') !== null) return new Response(null, { status: 401 });
        if (h.get('if-none-match') === etag) return new Response(null, { status: 304 });
        // Read as negotiation must; the floor answers identity JSON whatever they say.
        h.get('accept-encoding');
        h.get('accept');
        const q = (quotas.get(client) ?? 0) + 1;
        quotas.set(client, q);
        const left = LIMIT - used - 1;
        return new Response(page, {
          headers: {
            ...pageHeaders,
            'x-request-id': id,
            'x-ratelimit-remaining': String(left),
            'x-ratelimit-reset': String(windowEnd / 1000),
            ratelimit: `"ip-minute";r=${left};t=${Math.max(1, Math.ceil((windowEnd - now) / 1000))}`,
            'x-quota-remaining': String(QUOTA - q),
          },
        });
      },
    },
  },
  fetch: () => new Response('not found', { status: 404 }),
});
console.log(`floor listening on ${port}`);

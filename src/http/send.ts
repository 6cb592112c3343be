import type { PreparedPage } from '../read-model/read-model.ts';

export const DATA_CACHE_CONTROL = 'private, max-age=30';

/** True when an If-None-Match header matches the ETag (weak comparison, RFC 9110 §13.1.2). */
export function etagMatches(ifNoneMatch: string | null, etag: string): boolean {
  if (ifNoneMatch === null) return false;
  if (ifNoneMatch.trim() === '*') return true;
  for (const raw of ifNoneMatch.split(',')) {
    const tag = raw.trim();
    if (tag === etag || (tag.startsWith('W/') && tag.slice(2) === etag)) return true;
  }
  return false;
}

interface PageInits {
  notModified: ResponseInit;
  identity: ResponseInit;
  br: ResponseInit;
  gzip: ResponseInit;
}

// Header sets are built once per page and reused by every response that sends it.
const inits = new WeakMap<PreparedPage, PageInits>();

function initsFor(page: PreparedPage): PageInits {
  let i = inits.get(page);
  if (i !== undefined) return i;
  const validators = {
    etag: page.body.etag,
    'last-modified': new Date(page.lastModified).toUTCString(),
    'cache-control': DATA_CACHE_CONTROL,
    vary: 'Accept, Accept-Encoding',
  };
  const full = { ...validators, 'content-type': page.contentType };
  i = {
    notModified: { status: 304, headers: validators },
    identity: { headers: full },
    br: { headers: { ...full, 'content-encoding': 'br' } },
    gzip: { headers: { ...full, 'content-encoding': 'gzip' } },
  };
  inits.set(page, i);
  return i;
}

/** A prepared page as a conditional, compressed response: 304 on a matching validator. */
export function sendPage(request: Request, page: PreparedPage): Response {
  const init = initsFor(page);
  if (etagMatches(request.headers.get('if-none-match'), page.body.etag)) return new Response(null, init.notModified);
  const { body, encoding } = page.body.encodedFor(request.headers.get('accept-encoding'));
  return new Response(body, encoding === null ? init.identity : init[encoding]);
}

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

type Coding = 'identity' | 'br' | 'gzip';

interface PageInits {
  notModified: Record<Coding, ResponseInit>;
  ok: Record<Coding, ResponseInit>;
}

// Header sets are built once per page and reused by every response that sends it.
const inits = new WeakMap<PreparedPage, PageInits>();

function initsFor(page: PreparedPage): PageInits {
  let i = inits.get(page);
  if (i !== undefined) return i;
  const lastModified = new Date(page.lastModified).toUTCString();
  const validators = (coding: Coding) => ({
    etag: page.body.etagFor(coding === 'identity' ? null : coding),
    'last-modified': lastModified,
    'cache-control': DATA_CACHE_CONTROL,
    vary: 'Accept, Accept-Encoding',
  });
  const ok = (c: Coding): ResponseInit => ({ headers: { ...validators(c), 'content-type': page.contentType, ...(c === 'identity' ? {} : { 'content-encoding': c }) } });
  i = {
    notModified: { identity: { status: 304, headers: validators('identity') }, br: { status: 304, headers: validators('br') }, gzip: { status: 304, headers: validators('gzip') } },
    ok: { identity: ok('identity'), br: ok('br'), gzip: ok('gzip') },
  };
  inits.set(page, i);
  return i;
}

/**
 * A prepared page as a conditional, compressed response. Each content-coding has its own strong
 * ETag, so If-None-Match is compared with the one of the representation this request would get.
 */
export function sendPage(request: Request, page: PreparedPage): Response {
  const init = initsFor(page);
  const { body, encoding } = page.body.encodedFor(request.headers.get('accept-encoding'));
  const coding: Coding = encoding ?? 'identity';
  if (etagMatches(request.headers.get('if-none-match'), page.body.etagFor(encoding))) return new Response(null, init.notModified[coding]);
  return new Response(body, init.ok[coding]);
}

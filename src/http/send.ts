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

/** A prepared page as a conditional, compressed response: 304 on a matching validator. */
export function sendPage(request: Request, page: PreparedPage): Response {
  const { body } = page;
  const headers: Record<string, string> = {
    etag: body.etag,
    'last-modified': new Date(page.lastModified).toUTCString(),
    'cache-control': DATA_CACHE_CONTROL,
    vary: 'Accept, Accept-Encoding',
  };
  if (etagMatches(request.headers.get('if-none-match'), body.etag)) return new Response(null, { status: 304, headers });
  headers['content-type'] = page.contentType;
  const { body: bytes, encoding } = body.encodedFor(request.headers.get('accept-encoding'));
  if (encoding !== null) headers['content-encoding'] = encoding;
  return new Response(bytes, { headers });
}

import { Elysia } from 'elysia';
import { errorText, type Logger } from '../../log.ts';
import { ApiError, invalidParams, problemBody, type InvalidParam } from '../problems.ts';
import { requestIdOf } from './request-context.ts';

export function baseUrlOf(publicUrl: string, requestUrl: string): string {
  if (publicUrl !== '') return publicUrl;
  const i = requestUrl.indexOf('/', requestUrl.indexOf('//') + 2);
  return i === -1 ? requestUrl : requestUrl.slice(0, i);
}

export function pathOf(requestUrl: string): string {
  const start = requestUrl.indexOf('/', requestUrl.indexOf('//') + 2);
  if (start === -1) return '/';
  const q = requestUrl.indexOf('?', start);
  return q === -1 ? requestUrl.slice(start) : requestUrl.slice(start, q);
}

/** Adds the headers every problem response carries (type, no-store, the error's own) to `into`. */
export function addProblemHeaders(into: Record<string, string>, err: ApiError): Record<string, string> {
  into['content-type'] = 'application/problem+json';
  into['cache-control'] = 'no-store';
  for (const k in err.headers) into[k] = err.headers[k]!;
  return into;
}

/** Renders an ApiError as RFC 9457 problem+json; every error response goes through here. */
export function problemResponse(err: ApiError, opts: { publicUrl: string; requestUrl: string; headers: Record<string, unknown> }): Response {
  const body = problemBody(err, baseUrlOf(opts.publicUrl, opts.requestUrl), pathOf(opts.requestUrl), requestIdOf(opts.headers));
  return new Response(JSON.stringify(body), { status: err.status, headers: addProblemHeaders({}, err) });
}

/**
 * The one error handler: ApiErrors become their problem; Elysia's own NOT_FOUND / VALIDATION /
 * PARSE are remapped (its defaults are text or 422 with schema dumps); anything else is a bug,
 * logged by message and request id and answered with a fixed 500 body — never a stack or SQL.
 */
export function errorHandler(opts: { publicUrl: string; logger: Logger }) {
  return new Elysia({ name: 'trafik.errors' }).onError({ as: 'global' }, function renderProblem({ code, error, request, set }) {
    let api: ApiError;
    if (error instanceof ApiError) api = error;
    else if (code === 'NOT_FOUND') api = new ApiError('not_found', `No resource at ${pathOf(request.url)}. The API lives under /api/v1; see /swagger.`);
    else if (code === 'VALIDATION') {
      const params: InvalidParam[] = error.all.map((e) => ({
        name: 'path' in e && typeof e.path === 'string' && e.path !== '' ? e.path.replace(/^\//, '') : 'request',
        reason: ('summary' in e && typeof e.summary === 'string' ? e.summary : e.message) ?? 'invalid',
      }));
      api = invalidParams(params.length > 0 ? params : [{ name: 'request', reason: 'invalid' }]);
    } else if (error instanceof URIError) {
      // A path parameter with a broken percent-encoding: Elysia's decoding throws before routing.
      api = new ApiError('invalid_parameter', 'The path has a malformed percent-encoding.', { invalid_params: [{ name: 'path', reason: 'malformed percent-encoding' }] });
    } else if (code === 'PARSE') api = new ApiError('invalid_parameter', 'The request could not be parsed.', { invalid_params: [{ name: 'body', reason: 'GET requests take no body' }] });
    else {
      opts.logger.error('unhandled error', { request_id: requestIdOf(set.headers), path: pathOf(request.url), error: errorText(error) });
      api = new ApiError('internal_error', 'An unexpected error occurred. It has been logged; quote the request id when reporting it.');
    }
    return problemResponse(api, { publicUrl: opts.publicUrl, requestUrl: request.url, headers: set.headers });
  });
}

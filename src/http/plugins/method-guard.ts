import { Elysia } from 'elysia';
import { ApiError } from '../problems.ts';
import { ALLOW } from './request-context.ts';
import { problemResponse } from './errors.ts';

/**
 * The API is read-only: GET and HEAD pass, OPTIONS answers 204 (a CORS preflight included), and
 * any other method on any path — known or not — is 405 with `Allow` (CONTRACT §1).
 */
export function methodGuard(publicUrl: string) {
  function preflight(request: Request): Response {
    const headers: Record<string, string> = { allow: ALLOW, 'cache-control': 'no-store' };
    if (request.headers.has('access-control-request-method')) {
      headers['access-control-allow-methods'] = ALLOW;
      headers['access-control-allow-headers'] = 'Authorization, X-API-Key, If-None-Match, X-Request-Id, Last-Event-ID, Accept';
      headers['access-control-max-age'] = '86400';
    }
    return new Response(null, { status: 204, headers });
  }

  function notAllowed(method: string, request: Request, collected: Record<string, unknown>): Response {
    const err = new ApiError('method_not_allowed', `${method.slice(0, 20)} is not allowed: this API is read-only (GET, HEAD, OPTIONS).`, {}, { allow: ALLOW });
    return problemResponse(err, { publicUrl, requestUrl: request.url, headers: collected });
  }

  return new Elysia({ name: 'trafik.method-guard' }).onRequest(function methodGuardHook({ request, set }) {
    const m = request.method;
    if (m === 'GET' || m === 'HEAD') return;
    // Shaped so Elysia sees a synchronous hook (test/http/sync-path.test.ts).
    const answer = m === 'OPTIONS' ? preflight(request) : notAllowed(m, request, set.headers);
    return answer;
  });
}

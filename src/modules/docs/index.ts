import { toOpenAPISchema } from '@elysiajs/openapi';
import { SwaggerUIRender } from '@elysiajs/openapi/swagger';
import { Elysia, type AnyElysia } from 'elysia';
import swaggerCss from 'swagger-ui-dist/swagger-ui.css' with { type: 'file' };
import swaggerJs from 'swagger-ui-dist/swagger-ui-bundle.js' with { type: 'file' };
import { ApiError, PROBLEMS, problemBySlug, problemSlug, type ProblemCode } from '../../http/problems.ts';
import { PreparedBody } from '../../read-model/prepared-body.ts';
import { Event } from '../events/model.ts';
import { Health } from '../health/model.ts';
import { Problem } from '../shared-model.ts';
import { Stats } from '../stats/model.ts';
import { WebhookList } from '../webhooks/model.ts';
import { polishSpec } from './spec.ts';

const ASSETS: Record<string, { path: string; type: string }> = {
  'swagger-ui-bundle.js': { path: swaggerJs, type: 'text/javascript; charset=utf-8' },
  'swagger-ui.css': { path: swaggerCss, type: 'text/css; charset=utf-8' },
};

const DESCRIPTION = `Real-time traffic events for Turkey — accidents, jams, hazards and road closures in the 81
provinces, refreshed by a scan of 220 grid cells about every 90 seconds. Read-only JSON over GET.

**Errors** are RFC 9457 \`application/problem+json\` with a stable \`code\`; each \`type\` URL explains
its problem. **Rate limit**: 60 requests per 60 s per client IP on every endpoint; every response
carries \`X-RateLimit-*\` and the IETF \`RateLimit\`/\`RateLimit-Policy\` headers, a 429 carries
\`Retry-After: 60\`. **Plans**: without a key you are on Free (1,000 requests a month, counted per IP);
an API key in \`Authorization: Bearer\` or \`X-API-Key\` puts the request on its plan.
**Caching**: \`ETag\`/\`If-None-Match\` → 304 on events and stats.

Province boundaries: COD-AB (Harita Genel Müdürlüğü / UN OCHA), CC BY-IGO.`;

/**
 * OpenAPI 3.1 generated from the routes' `t` schemas, and Swagger UI whose script and stylesheet
 * are embedded in the binary and served from here, so the page works on a VM with no internet.
 */
const EXCLUDE = { paths: ['/', '/problems/:slug', '/swagger', '/swagger/json', '/swagger/assets/:name'] };

const DOCUMENTATION = {
  info: { title: 'trafik — Traffic Events API for Turkey', version: '1.0', description: DESCRIPTION },
  tags: [
    { name: 'Events', description: 'Traffic events: accidents, jams, hazards, road closures' },
    { name: 'Statistics', description: 'Aggregates over the 24-hour window' },
    { name: 'Health', description: 'Monitoring and uptime checks' },
    { name: 'Webhooks', description: 'Enterprise: the calling key\'s webhook subscriptions (managed by the CLI)' },
  ],
  security: [{}, { bearer: [] }, { apiKeyHeader: [] }],
};

const SECURITY_SCHEMES = {
  bearer: { type: 'http', scheme: 'bearer', description: 'API key (trk_live_…); optional — without one the request is on the Free plan' },
  apiKeyHeader: { type: 'apiKey', in: 'header', name: 'X-API-Key' },
};

/** Plain JSON Schema of a `t` model (TypeBox keeps its metadata under symbols). */
const plain = (schema: object): Record<string, unknown> => JSON.parse(JSON.stringify(schema));

/**
 * OpenAPI 3.1 generated from the routes' `t` schemas, and Swagger UI whose script and stylesheet
 * are embedded in the binary and served from here, so the page works on a VM with no internet.
 * `root` is the finished app, read once on the first request for the document.
 */
export function docsRoutes(release: string, root: () => AnyElysia) {
  const cache = new Map<string, PreparedBody>();
  let spec: PreparedBody | undefined;
  const buildSpec = () => {
    const generated = toOpenAPISchema(root(), EXCLUDE, undefined, undefined, '3.1.1');
    const doc: Record<string, unknown> = {
      openapi: '3.1.1',
      ...DOCUMENTATION,
      'x-release': release,
      paths: generated.paths,
      components: { ...generated.components, securitySchemes: SECURITY_SCHEMES },
    };
    return new PreparedBody(JSON.stringify(polishSpec(doc, { Problem: plain(Problem), Event: plain(Event), Stats: plain(Stats), Health: plain(Health), WebhookList: plain(WebhookList) })));
  };
  // The UI page and the problem pages are rendered once and sent like every other body over
  // 1 KiB: compressed when the client accepts it (CONTRACT §1). The openapi plugin's own page
  // route answers with a fixed, uncompressed Response, so the page is rendered here instead.
  const page = new PreparedBody(
    SwaggerUIRender(DOCUMENTATION.info, {
      url: '/swagger/json',
      cdn: '/swagger/assets/swagger-ui-bundle.js',
      theme: '/swagger/assets/swagger-ui.css',
      validatorUrl: 'none',
      autoDarkMode: false,
      docExpansion: 'list',
      tryItOutEnabled: true,
    } as Parameters<typeof SwaggerUIRender>[1]),
  );
  const problemPages = new Map<ProblemCode, PreparedBody>();
  return new Elysia({ name: 'trafik.docs' })
    .get('/swagger', ({ request }) => sendPrepared(request, page, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-cache' }), { detail: { hide: true } })
    .get('/swagger/json', ({ request }) => {
      spec ??= buildSpec();
      return sendPrepared(request, spec, { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-cache' });
    }, { detail: { hide: true } })
    .get('/swagger/assets/:name', async ({ params, request }) => {
      // Elysia leaves a path parameter it cannot percent-decode undefined.
      const asset = typeof params.name === 'string' ? ASSETS[params.name] : undefined;
      if (asset === undefined) return notFound();
      let body = cache.get(params.name);
      if (body === undefined) cache.set(params.name, (body = new PreparedBody(await Bun.file(asset.path).bytes())));
      return sendPrepared(request, body, { 'content-type': asset.type, 'cache-control': 'public, max-age=86400' });
    })
    .get('/problems/:slug', ({ params, request }) => {
      const code = typeof params.slug === 'string' ? problemBySlug(params.slug) : undefined;
      if (code === undefined) return notFound();
      let body = problemPages.get(code);
      if (body === undefined) problemPages.set(code, (body = new PreparedBody(problemPage(code))));
      return sendPrepared(request, body, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'public, max-age=86400' });
    })
    .get('/', () =>
      Response.json({
        name: 'trafik',
        description: 'Real-time traffic events for Turkey',
        api_version: '1.0',
        release,
        docs: '/swagger',
        openapi: '/swagger/json',
        endpoints: ['/api/v1/events', '/api/v1/events/{city}', '/api/v1/stats', '/api/v1/health'],
      }),
    );
}

function sendPrepared(request: Request, body: PreparedBody, headers: Record<string, string>): Response {
  const { body: bytes, encoding } = body.encodedFor(request.headers.get('accept-encoding'));
  const all: Record<string, string> = { ...headers, etag: body.etagFor(encoding), vary: 'Accept-Encoding' };
  if (encoding !== null) all['content-encoding'] = encoding;
  return new Response(bytes, { headers: all });
}

function notFound(): never {
  throw new ApiError('not_found', 'No such page.');
}

function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

function problemPage(code: ProblemCode): string {
  const p = PROBLEMS[code];
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${escapeHtml(p.title)} — trafik</title>
<style>body{font:16px/1.5 system-ui,sans-serif;max-width:42rem;margin:3rem auto;padding:0 1rem}code{background:#eee;padding:0 .2em}</style></head>
<body><h1>${escapeHtml(p.title)}</h1><p>HTTP status <b>${p.status}</b>, <code>code: "${code}"</code>, <code>type: …/problems/${problemSlug(code)}</code></p>
<p>${escapeHtml(p.about).replace(/`([^`]+)`/g, '<code>$1</code>')}</p>
<p>Every error of the trafik API is an RFC 9457 <code>application/problem+json</code> body with <code>type</code>, <code>title</code>, <code>status</code>, <code>detail</code>, <code>instance</code>, <code>code</code> and <code>request_id</code>. See <a href="/swagger">the API documentation</a>.</p></body></html>`;
}

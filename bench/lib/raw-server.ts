/**
 * The baselines: a raw Bun.serve answering one path with bytes read from a file, through a JS
 * handler and a prebuilt Blob (the cheapest a JS handler can answer).
 *   bun bench/lib/raw-server.ts <port> <path> <body-file> <content-type> [status] [headers-json]
 * With `headers-json` (the headers trafik sent, content type included), every response carries
 * them and a fresh X-Request-Id, in a fresh headers object as trafik builds one: the "raw+headers"
 * baseline. Without, only the content type, from one prebuilt init.
 */
import { readFileSync } from 'node:fs';

const [port, path, file, contentType, status, headersFile] = process.argv.slice(2) as [string, string, string, string, string | undefined, string | undefined];
const body = new Blob([await Bun.file(file).bytes()]);
const code = Number(status ?? 200);
let respond: () => Response;
if (headersFile === undefined) {
  const init = { status: code, headers: { 'content-type': contentType } };
  respond = () => new Response(body, init);
} else {
  const headers = JSON.parse(readFileSync(headersFile, 'utf8')) as Record<string, string>;
  let n = 0;
  respond = () => new Response(body, { status: code, headers: { ...headers, 'x-request-id': `req_${++n}` } });
}
Bun.serve({ port: Number(port), hostname: '127.0.0.1', routes: { [path]: { GET: respond } }, fetch: () => new Response('not found', { status: 404 }) });
console.log(`raw listening on ${port}`);

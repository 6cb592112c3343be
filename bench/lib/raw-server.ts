/**
 * The baseline: a raw Bun.serve answering one path with bytes read from a file, through a JS
 * handler and a prebuilt Blob (the cheapest a JS handler can answer).
 *   bun bench/lib/raw-server.ts <port> <path> <body-file> <content-type> [status]
 */
const [port, path, file, contentType, status] = process.argv.slice(2) as [string, string, string, string, string | undefined];
const body = new Blob([await Bun.file(file).bytes()]);
const init = { status: Number(status ?? 200), headers: { 'content-type': contentType } };
Bun.serve({ port: Number(port), hostname: '127.0.0.1', routes: { [path]: { GET: () => new Response(body, init) } }, fetch: () => new Response('not found', { status: 404 }) });
console.log(`raw listening on ${port}`);

/**
 * Builds dist/trafik (or the path given as the first argument): one standalone executable with
 * the migrations embedded as assets (`--asset drizzle`) and the Swagger UI files embedded through
 * their `type: 'file'` imports.
 *
 * Not minified, so not `--production` (which minifies): Elysia reads hooks' and handlers' source
 * text — minified whitespace can break its parsing (STACK.md §7.2), and minified code looks
 * asynchronous to its `isAsync` guess, which costs every request an extra await
 * (test/http/sync-path.test.ts). `process.env.NODE_ENV` is defined as "production" for the bundled
 * code, as `--production` would (the single quotes keep the double quotes through Bun's shell).
 */
import { $ } from 'bun';
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';

const outfile = process.argv[2] ?? 'dist/trafik';
mkdirSync(dirname(outfile), { recursive: true });
const started = performance.now();
// The scanner worker is a second entry point: a compiled binary only contains the workers it lists.
await $`bun build --compile --define 'process.env.NODE_ENV="production"' --asset drizzle src/main.ts src/scanner/worker-entry.ts --outfile ${outfile}`.quiet();
const size = Bun.file(outfile).size;
console.log(`${outfile}: ${(size / 1e6).toFixed(1)} MB in ${Math.round(performance.now() - started)} ms`);

/**
 * Builds dist/trafik (or the path given as the first argument): one standalone executable with
 * the migrations embedded as assets (`--asset drizzle`) and the Swagger UI files embedded through
 * their `type: 'file'` imports. `--production` without `--minify`: minified whitespace breaks
 * Elysia's handler parsing (STACK.md §7.2).
 */
import { $ } from 'bun';
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';

const outfile = process.argv[2] ?? 'dist/trafik';
mkdirSync(dirname(outfile), { recursive: true });
const started = performance.now();
// The scanner worker is a second entry point: a compiled binary only contains the workers it lists.
await $`bun build --compile --production --asset drizzle src/main.ts src/scanner/worker-entry.ts --outfile ${outfile}`.quiet();
const size = Bun.file(outfile).size;
console.log(`${outfile}: ${(size / 1e6).toFixed(1)} MB in ${Math.round(performance.now() - started)} ms`);

import { $ } from 'bun';

export interface LoadResult {
  rps: number;
  p99Ms: number;
  requests: number;
  non2xx: number;
}

const hasTaskset = Bun.which('taskset') !== null;

/** `taskset -c N` prefix so the server and the load generator get a core each on 2-core machines. */
export function pin(cpu: number): string[] {
  return hasTaskset ? ['taskset', '-c', String(cpu)] : [];
}

function ms(value: string, unit: string): number {
  const n = Number(value);
  return unit === 'us' ? n / 1000 : unit === 's' ? n * 1000 : unit === 'm' ? n * 60_000 : n;
}

/**
 * Drives `url` with wrk (Debian `wrk`), or autocannon through npx when wrk is missing, from a
 * separate process. `script` is an optional wrk Lua script (e.g. rotating X-Forwarded-For).
 */
export async function load(url: string, opts: { seconds: number; connections: number; script?: string; cpu?: number }): Promise<LoadResult> {
  if (Bun.which('wrk') !== null) {
    const args = [...pin(opts.cpu ?? 1), 'wrk', '-t1', `-c${opts.connections}`, `-d${opts.seconds}s`, '--latency', ...(opts.script ? ['-s', opts.script] : []), url];
    const out = await $`${args}`.quiet().text();
    const rps = Number(/Requests\/sec:\s+([\d.]+)/.exec(out)?.[1] ?? NaN);
    const p99 = /99%\s+([\d.]+)(us|ms|s|m)\b/.exec(out);
    const requests = Number(/(\d+) requests in/.exec(out)?.[1] ?? NaN);
    const non2xx = Number(/Non-2xx or 3xx responses: (\d+)/.exec(out)?.[1] ?? 0);
    return { rps, p99Ms: p99 ? ms(p99[1]!, p99[2]!) : NaN, requests, non2xx };
  }
  const out = await $`npx --yes autocannon -j -c ${opts.connections} -d ${opts.seconds} ${url}`.quiet().json();
  return { rps: out.requests.average, p99Ms: out.latency.p99, requests: out.requests.total, non2xx: out.non2xx };
}

export function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

export async function waitForHttp(url: string, ms = 15_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    try {
      const r = await fetch(url);
      await r.arrayBuffer();
      return;
    } catch {
      await Bun.sleep(100);
    }
  }
  throw new Error(`no answer from ${url}`);
}

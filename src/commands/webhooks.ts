import { onlyFlags, parseArgs, stringFlag, UsageError, type ParsedArgs } from '../cli/args.ts';
import { systemClock } from '../clock.ts';
import {
  addEndpoint,
  listAllSubscriptions,
  parseCities,
  parseTypes,
  removeEndpoint,
  sendTestMessage,
  WebhookInputError,
  type WebhookSubscriptionView,
} from '../webhooks/index.ts';
import { openRuntime, type Runtime } from './runtime.ts';

const USAGE = 'webhooks add --key KEY_ID --url URL [--types …] [--cities …] | list [--key KEY_ID] | remove ID | test ID  (each takes --json)';

/** `trafik webhooks add|list|remove|test` (CONTRACT §8), against the database of a running server. */
export async function webhooksCommand(argv: string[]): Promise<number> {
  const [sub, ...rest] = argv;
  try {
    switch (sub) {
      case 'add':
        return await add(rest);
      case 'list':
        return list(rest);
      case 'remove':
        return remove(rest);
      case 'test':
        return await test(rest);
      case undefined:
        throw new UsageError(`webhooks needs a subcommand: ${USAGE}`);
      default:
        throw new UsageError(`unknown webhooks subcommand '${sub}' (expected add, list, remove or test)`);
    }
  } catch (err) {
    if (err instanceof WebhookInputError) throw new UsageError(err.message);
    throw err;
  }
}

function out(line: string): void {
  process.stdout.write(`${line}\n`);
}

function noPositionals(args: ParsedArgs): void {
  if (args.positionals.length > 0) throw new UsageError(`unexpected argument '${args.positionals[0]}'`);
}

function oneId(args: ParsedArgs, what: string): string {
  const [id, extra] = args.positionals;
  if (id === undefined) throw new UsageError(`webhooks ${what} needs a webhook id (whk_…)`);
  if (extra !== undefined) throw new UsageError(`unexpected argument '${extra}'`);
  return id;
}

function withRuntime<T>(fn: (rt: Runtime) => T): T {
  const rt = openRuntime();
  try {
    return fn(rt);
  } finally {
    rt.main.sqlite.close();
  }
}

async function add(argv: string[]): Promise<number> {
  const args = parseArgs(argv, ['key', 'url', 'types', 'cities']);
  onlyFlags(args, ['key', 'url', 'types', 'cities', 'json']);
  noPositionals(args);
  const keyId = stringFlag(args, 'key');
  const url = stringFlag(args, 'url');
  if (keyId === undefined) throw new UsageError('webhooks add needs --key KEY_ID');
  if (url === undefined) throw new UsageError('webhooks add needs --url URL');
  const typesRaw = stringFlag(args, 'types');
  const citiesRaw = stringFlag(args, 'cities');
  const types = typesRaw === undefined ? null : parseTypes(typesRaw);
  const cities = citiesRaw === undefined ? null : parseCities(citiesRaw);
  const rt = openRuntime();
  try {
    const { endpoint, secret } = await addEndpoint(rt.main.sqlite, { keyId, url, types, cities }, { now: systemClock(), allowPrivate: rt.config.webhookAllowPrivate });
    if (args.flags.has('json')) {
      const view = listAllSubscriptions(rt.main.sqlite, keyId).find((v) => v.id === endpoint.id)!;
      out(JSON.stringify({ ...view, secret }));
    } else {
      out(`id: ${endpoint.id}`);
      out(`secret: ${secret}`);
      process.stderr.write('Keep the secret now: it is not shown again.\n');
    }
    return 0;
  } finally {
    rt.main.sqlite.close();
  }
}

function describe(v: WebhookSubscriptionView & { key_id: string }): string {
  const types = v.filters.types?.join(',') ?? 'all';
  const cities = v.filters.cities?.map((c) => c.slug).join(',') ?? 'all';
  const status = v.status === 'active' ? 'active' : `disabled (${v.disabled_reason ?? 'no reason'})`;
  return [
    v.id,
    v.key_id,
    status,
    v.url,
    `types=${types}`,
    `cities=${cities}`,
    `pending=${v.pending_deliveries}`,
    `delivered=${v.delivered_count}`,
    `failed=${v.failed_count}`,
    `consecutive_failures=${v.consecutive_failures}`,
    `last_success=${v.last_success_at ?? '-'}`,
  ].join('  ');
}

function list(argv: string[]): number {
  const args = parseArgs(argv, ['key']);
  onlyFlags(args, ['key', 'json']);
  noPositionals(args);
  const keyId = stringFlag(args, 'key');
  return withRuntime((rt) => {
    if (keyId !== undefined && rt.main.sqlite.query('SELECT 1 FROM api_keys WHERE id = ?').get(keyId) === null) throw new UsageError(`unknown key '${keyId}'`);
    const views = listAllSubscriptions(rt.main.sqlite, keyId);
    if (args.flags.has('json')) out(JSON.stringify(views));
    else if (views.length === 0) out('no webhooks');
    else for (const v of views) out(describe(v));
    return 0;
  });
}

function remove(argv: string[]): number {
  const args = parseArgs(argv, []);
  onlyFlags(args, ['json']);
  const id = oneId(args, 'remove');
  return withRuntime((rt) => {
    if (!removeEndpoint(rt.main.sqlite, id, systemClock())) throw new UsageError(`unknown webhook '${id}'`);
    out(args.flags.has('json') ? JSON.stringify({ id, removed: true }) : `removed: ${id}`);
    return 0;
  });
}

async function test(argv: string[]): Promise<number> {
  const args = parseArgs(argv, []);
  onlyFlags(args, ['json']);
  const id = oneId(args, 'test');
  const rt = openRuntime();
  try {
    const r = await sendTestMessage(rt.main.sqlite, id, { now: systemClock(), allowPrivate: rt.config.webhookAllowPrivate });
    const latency = Math.round(r.latencyMs * 10) / 10;
    if (args.flags.has('json')) {
      out(JSON.stringify({ id: r.endpointId, url: r.url, msg_id: r.msgId, ok: r.ok, status: r.status, latency_ms: latency, error: r.error }));
    } else {
      out(`status: ${r.status ?? 'none'}`);
      out(`latency_ms: ${latency}`);
      if (r.error !== null) out(`error: ${r.error}`);
    }
    return r.ok ? 0 : 1;
  } finally {
    rt.main.sqlite.close();
  }
}

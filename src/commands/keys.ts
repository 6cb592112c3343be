import { onlyFlags, parseArgs, stringFlag, UsageError } from '../cli/args.ts';
import { iso, systemClock } from '../clock.ts';
import type { Plan } from '../db/schema/limits.ts';
import { KEY_ID_PATTERN } from '../keys/format.ts';
import { KeyStore, PLANS, type ApiKeyRecord } from '../keys/store.ts';
import { KEY_CACHE_TTL_MS } from '../keys/resolver.ts';
import { openRuntime } from './runtime.ts';

const USAGE = 'keys create --plan free|enterprise --name NAME | keys list | keys revoke ID (each takes --json)';

/** The CLI waits this long for the write lock a running server's scanner may hold. */
const CLI_BUSY_TIMEOUT_MS = 30_000;

function recordJson(r: ApiKeyRecord) {
  return {
    id: r.id,
    prefix: r.prefix,
    plan: r.plan,
    name: r.name,
    created_at: iso(r.createdAt),
    last_used_at: r.lastUsedAt === null ? null : iso(r.lastUsedAt),
    revoked_at: r.revokedAt === null ? null : iso(r.revokedAt),
    status: r.revokedAt === null ? 'active' : 'revoked',
  };
}

function checkName(raw: string | undefined): string {
  if (raw === undefined) throw new UsageError('keys create needs --name NAME');
  const name = raw.trim();
  if (name === '') throw new UsageError('--name must not be empty');
  if (name.length > 100) throw new UsageError('--name must be at most 100 characters');
  if (/[\u0000-\u001f\u007f]/.test(name)) throw new UsageError('--name must not contain control characters');
  return name;
}

function checkPlan(raw: string | undefined): Plan {
  if (raw === undefined) throw new UsageError('keys create needs --plan free|enterprise');
  const plan = raw.trim().toLowerCase();
  if (!(PLANS as readonly string[]).includes(plan)) throw new UsageError(`--plan must be free or enterprise, got '${raw}'`);
  return plan as Plan;
}

function out(line: string): void {
  process.stdout.write(`${line}\n`);
}

/**
 * `trafik keys create|list|revoke`: manages API keys in the configured database, also while a
 * server runs on it (WAL; a running server sees a new or revoked key within the key cache TTL).
 * Bad input exits 2 with one line (UsageError); an unknown key id exits 1.
 */
export async function keysCommand(argv: string[]): Promise<number> {
  const [sub, ...rest] = argv;
  if (sub === undefined || sub.startsWith('--')) throw new UsageError(`keys needs a subcommand: ${USAGE}`);
  if (sub !== 'create' && sub !== 'list' && sub !== 'revoke') throw new UsageError(`unknown keys subcommand '${sub}': ${USAGE}`);
  const args = parseArgs(rest, ['plan', 'name']);
  const json = args.flags.has('json');
  let plan: Plan | null = null;
  let name: string | null = null;
  let id: string | null = null;
  if (sub === 'create') {
    onlyFlags(args, ['plan', 'name', 'json']);
    if (args.positionals.length > 0) throw new UsageError(`unexpected argument '${args.positionals[0]}' (the name goes in --name)`);
    plan = checkPlan(stringFlag(args, 'plan'));
    name = checkName(stringFlag(args, 'name'));
  } else if (sub === 'list') {
    onlyFlags(args, ['json']);
    if (args.positionals.length > 0) throw new UsageError(`unexpected argument '${args.positionals[0]}'`);
  } else {
    onlyFlags(args, ['json']);
    if (args.positionals.length !== 1) throw new UsageError('keys revoke needs exactly one key id (see trafik keys list)');
    id = args.positionals[0]!;
    if (!KEY_ID_PATTERN.test(id)) throw new UsageError(`'${id.slice(0, 60)}' is not a key id (key_ followed by 16 letters or digits; see trafik keys list)`);
  }

  const { main } = openRuntime();
  try {
    main.sqlite.exec(`PRAGMA busy_timeout = ${CLI_BUSY_TIMEOUT_MS}`);
    const store = new KeyStore(main.sqlite);
    const now = systemClock();
    if (sub === 'create') {
      const { key, record } = store.create({ plan: plan!, name: name!, now });
      if (json) out(JSON.stringify({ ...recordJson(record), key }));
      else {
        out(`id: ${record.id}`);
        out(`key: ${key}`);
        process.stderr.write(`Created ${record.plan} key '${record.name}'. Store the key now: it is shown only once.\n`);
      }
      return 0;
    }
    if (sub === 'list') {
      const rows = store.list();
      if (json) out(JSON.stringify(rows.map(recordJson)));
      else if (rows.length === 0) out('no keys (create one with: trafik keys create --plan free --name NAME)');
      else {
        const table = rows.map((r) => {
          const j = recordJson(r);
          return [j.id, j.prefix, j.plan, j.status, j.created_at, j.last_used_at ?? '-', j.name];
        });
        const head = ['ID', 'PREFIX', 'PLAN', 'STATUS', 'CREATED', 'LAST USED', 'NAME'];
        const widths = head.map((h, i) => Math.max(h.length, ...table.map((row) => row[i]!.length)));
        for (const row of [head, ...table]) out(row.map((c, i) => (i === row.length - 1 ? c : c.padEnd(widths[i]!))).join('  '));
      }
      return 0;
    }
    const result = store.revoke(id!, now);
    if (result === null) {
      process.stderr.write(`trafik: no key with id ${id}\n`);
      return 2;
    }
    if (json) out(JSON.stringify({ ...recordJson(result.record), already_revoked: result.already }));
    else {
      const when = iso(result.record.revokedAt!);
      out(result.already ? `${id} was already revoked at ${when}` : `revoked ${id} (${result.record.name}); a running server refuses it within ${KEY_CACHE_TTL_MS / 1000} s`);
    }
    return 0;
  } finally {
    main.sqlite.close();
  }
}

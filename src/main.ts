#!/usr/bin/env bun
import { UsageError } from './cli/args.ts';
import { ConfigError } from './config.ts';
import { RELEASE } from './release.ts';

const HELP = `trafik ${RELEASE} — real-time traffic events API for Turkey

Usage:
  trafik [serve]                 Run the HTTP API and the scan loop (the default)
  trafik scan --once [--json]    Run one full scan, then exit (non-zero if every cell failed)
  trafik keys create --plan free|enterprise --name NAME [--json]
                                 Create an API key; prints its id and the key (shown once)
  trafik keys list [--json]      List keys (id, prefix, plan, status, created, last used, name)
  trafik keys revoke ID [--json] Revoke a key; a running server refuses it within 2 s
  trafik webhooks add --key KEY_ID --url URL [--types …] [--cities …] [--json]
                                 Subscribe an Enterprise key; prints its id and the secret (shown once)
  trafik webhooks list [--key KEY_ID] | remove ID | test ID  [--json]
                                 List with delivery stats, remove, or send a signed test message
  trafik --help | --version

Configuration is read from the environment (see README): PORT, HOST, DATABASE_PATH, SOURCES,
WAZE_URL, TOMTOM_URL, TOMTOM_API_KEY, HERE_URL, HERE_API_KEY, REPLAY_DIR, SCAN_INTERVAL_SECONDS,
TRUST_PROXY, RATE_LIMIT_PER_MINUTE, FREE_MONTHLY_QUOTA, HISTORY_DAYS, WEBHOOK_ALLOW_PRIVATE,
LOG_LEVEL, PUBLIC_URL. A bad value stops the start with a one-line message, exit code 2.
`;

type Command = (argv: string[]) => Promise<number>;

const COMMANDS: Record<string, () => Promise<Command>> = {
  serve: async () => (await import('./commands/serve.ts')).serveCommand,
  scan: async () => (await import('./commands/scan.ts')).scanCommand,
  keys: async () => (await import('./commands/keys.ts')).keysCommand,
  webhooks: async () => (await import('./commands/webhooks.ts')).webhooksCommand,
};

async function main(argv: string[]): Promise<number> {
  const first = argv[0];
  if (first === '--help' || first === '-h' || first === 'help') {
    process.stdout.write(HELP);
    return 0;
  }
  if (first === '--version' || first === '-v') {
    process.stdout.write(`trafik ${RELEASE}\n`);
    return 0;
  }
  const name = first === undefined || first.startsWith('--') ? 'serve' : first;
  const rest = first === undefined || first.startsWith('--') ? argv : argv.slice(1);
  const load = COMMANDS[name];
  if (load === undefined) throw new UsageError(`unknown command '${name}' (try trafik --help)`);
  if (rest.includes('--help')) {
    process.stdout.write(HELP);
    return 0;
  }
  return (await load())(rest);
}

try {
  process.exitCode = await main(process.argv.slice(2));
} catch (err) {
  if (err instanceof ConfigError || err instanceof UsageError) {
    process.stderr.write(`trafik: ${err.message}\n`);
    process.exitCode = 2;
  } else {
    process.stderr.write(`trafik: ${err instanceof Error ? err.message.split('\n')[0] : String(err)}\n`);
    process.exitCode = 1;
  }
}
// Every command has flushed and closed what it owns by the time it returns (serve: scan finished,
// quotas written, rate windows saved, connections closed). Exiting here guarantees the process
// ends then, even if a library still holds a handle (a client's keep-alive socket, a timer).
process.exit(process.exitCode ?? 0);

import { loadOrCreateDevKeys } from '../auth/dev-keys.ts';
import { mintDevToken } from '../auth/mint.ts';
import { isDevAuth } from '../config/embedded-sample.ts';
import { parseArgs } from '../lib/cli-args.ts';
import { ConfigError } from '../config/validate.ts';
import { loadConfig } from '../gateway/load-config.ts';

/** `npm run token -- --sub <s> --scope <scopes> --ttl <seconds> [--config FILE]`: a dev-mode token on stdout. */
const USAGE = 'usage: npm run token -- [--sub SUBJECT] [--scope "SCOPE ..."] [--ttl SECONDS] [--config FILE]';

async function main(): Promise<void> {
  const args = parseArgs(process.argv.slice(2), ['--sub', '--scope', '--ttl', '--config'], ['--help']);
  if (args.has('--help')) {
    process.stdout.write(`${USAGE}\n`);
    return;
  }
  const file = args.get('--config');
  const config = loadConfig({ file: typeof file === 'string' ? file : undefined, env: process.env });
  const { auth } = config;
  if (!isDevAuth(auth)) {
    throw new Error('this config has a key source; `npm run token` mints dev-mode tokens only (get tokens from your issuer)');
  }
  const ttlText = String(args.get('--ttl') ?? '3600');
  if (!/^[1-9]\d{0,8}$/.test(ttlText)) throw new Error('--ttl: expected a whole number of seconds');
  const keys = await loadOrCreateDevKeys(auth.devKeyDir);
  const token = await mintDevToken(keys, {
    sub: String(args.get('--sub') ?? 'dev-user'),
    scope: String(args.get('--scope') ?? auth.requiredScope),
    ttlSeconds: Number(ttlText),
    issuer: auth.issuer,
    audience: auth.audience,
  });
  process.stdout.write(`${token}\n`);
}

main().catch((err: unknown) => {
  const lines = err instanceof ConfigError ? err.problems : [(err as Error).message];
  for (const line of lines) process.stderr.write(`token: ${line}\n`);
  process.stderr.write(`${USAGE}\n`);
  process.exit(1);
});

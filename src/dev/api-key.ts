import { apiKeyHash, newApiKey } from '../auth/api-keys/key-format.ts';
import { parseArgs } from '../lib/cli-args.ts';

/** `npm run api-key -- [--prefix P]`: a new API key and the SHA-256 to list in auth.apiKeys.file. */
const USAGE = 'usage: npm run api-key -- [--prefix PREFIX]   (the prefix must match auth.apiKeys.prefix, default hg_)';

function main(): void {
  const args = parseArgs(process.argv.slice(2), ['--prefix'], ['--help']);
  if (args.has('--help')) {
    process.stdout.write(`${USAGE}\n`);
    return;
  }
  const prefix = String(args.get('--prefix') ?? 'hg_');
  if (!/^[A-Za-z0-9_]{1,16}$/.test(prefix)) throw new Error('--prefix: expected 1 to 16 letters, digits or "_"');
  const key = newApiKey(prefix);
  // The key goes to its holder, the hash into the key file: the gateway keeps no key.
  process.stdout.write(`key:    ${key}\nsha256: ${apiKeyHash(key)}\n`);
}

try {
  main();
} catch (err) {
  process.stderr.write(`api-key: ${(err as Error).message}\n${USAGE}\n`);
  process.exit(1);
}

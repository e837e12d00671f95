import { readFile } from 'node:fs/promises';
import { ConfigError } from '../../config/validate.ts';
import { consumerOf, consumerProblem, type Consumer } from './consumer.ts';
import { isApiKeyHash } from './key-format.ts';

/** The largest key file read (a million keys' hashes fit). */
const MAX_FILE_BYTES = 128 * 1024 * 1024;

/**
 * The consumers of auth.apiKeys.file by the SHA-256 (hex) of each of their keys:
 * `{"consumers": {"<name>": {"keys": ["<hex>", ...], "scopes": [...], "claims": {...}, "plan": "<plan>"}}}`.
 * A file that cannot be read or is not of that shape is a config problem naming the file and the
 * consumer, so a start or a reload with it fails and says why. One hash under two consumers too: it
 * would be one key.
 */
export async function readApiKeyFile(path: string): Promise<ReadonlyMap<string, Consumer>> {
  const where = `auth.apiKeys.file: ${path}`;
  const fail = (problem: string): never => {
    throw new ConfigError([`${where}: ${problem}`]);
  };
  let text = '';
  try {
    const bytes = await readFile(path);
    if (bytes.length > MAX_FILE_BYTES) fail(`larger than ${MAX_FILE_BYTES} bytes`);
    text = bytes.toString('utf8');
  } catch (err) {
    if (err instanceof ConfigError) throw err;
    fail(`could not be read (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    fail(`not JSON (${(err as Error).message})`);
  }
  const consumers = (parsed as { consumers?: unknown } | null)?.consumers;
  if (typeof consumers !== 'object' || consumers === null || Array.isArray(consumers)) return fail('expected {"consumers": {"<name>": {...}}}');
  const byHash = new Map<string, Consumer>();
  for (const [name, value] of Object.entries(consumers as Record<string, unknown>)) {
    if (typeof value !== 'object' || value === null || Array.isArray(value)) fail(`consumer "${name}": expected an object`);
    const entry = value as Record<string, unknown>;
    const unknownKey = Object.keys(entry).find((k) => !['keys', 'scopes', 'claims', 'plan'].includes(k));
    if (unknownKey !== undefined) fail(`consumer "${name}": unknown key "${unknownKey}"`);
    const problem = consumerProblem(name, entry['scopes'], entry['claims'], entry['plan']);
    if (problem !== null) fail(`consumer "${name}": ${problem}`);
    const keys = entry['keys'];
    if (!Array.isArray(keys) || !keys.every(isApiKeyHash)) fail(`consumer "${name}": "keys" must list the SHA-256 of each key, as 64 lower-case hex digits`);
    const consumer = consumerOf(name, entry['scopes'], entry['claims'], entry['plan']);
    for (const hash of keys as string[]) {
      const other = byHash.get(hash);
      if (other !== undefined && other !== consumer) fail(`consumer "${name}": a key hash is also listed under "${other.consumer}"`);
      byHash.set(hash, consumer);
    }
  }
  return byHash;
}

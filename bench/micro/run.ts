/**
 * The micro-benchmarks of the hot path's pieces, each against its simplest alternative:
 *   npm run bench:micro [-- --ms 300] [--only bearer,token-cache,auth-hit,age,header-write,cors-head,jose,api-key]
 * Plain loops with process.hrtime.bigint(); nothing to install.
 */
import { parseArgs } from '../../src/lib/cli-args.ts';
import { age } from './age.ts';
import { authHit } from './auth-hit.ts';
import { apiKey } from './api-key.ts';
import { bearer } from './bearer.ts';
import { corsHead } from './cors-head.ts';
import { headerWrite } from './header-write.ts';
import { joseVerify } from './jose-verify.ts';
import { table, type Comparison } from './timing.ts';
import { tokenCache } from './token-cache.ts';

const ALL: Record<string, (ms: number) => Comparison | Comparison[] | Promise<Comparison[]>> = {
  bearer,
  'token-cache': tokenCache,
  'auth-hit': authHit,
  age,
  'header-write': headerWrite,
  'cors-head': corsHead,
  jose: joseVerify,
  'api-key': apiKey,
};

export async function runMicro(ms: number, only: readonly string[] = Object.keys(ALL)): Promise<Comparison[]> {
  const out: Comparison[] = [];
  for (const name of only) {
    const bench = ALL[name];
    if (bench === undefined) throw new Error(`unknown micro-benchmark ${name} (known: ${Object.keys(ALL).join(', ')})`);
    const result = await bench(ms);
    out.push(...(Array.isArray(result) ? result : [result]));
  }
  return out;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const args = parseArgs(process.argv.slice(2), ['--ms', '--only'], []);
  const only = typeof args.get('--only') === 'string' ? String(args.get('--only')).split(',') : undefined;
  const results = await runMicro(Number(args.get('--ms') ?? 300), only);
  process.stdout.write(`node ${process.version}\n\n${results.map(table).join('\n')}`);
}

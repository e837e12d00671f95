import { createRequire } from 'node:module';

type Undici = typeof import('undici');

let loaded: Undici | null = null;

/**
 * undici, loaded the first time the gateway calls an upstream or fetches a key set, not at start:
 * its module graph (fetch, web streams, the HTTP parser's WebAssembly) is ~8 MB of resident memory
 * that a gateway which has not yet forwarded anything does not need (the start figure in
 * bench/RESULTS.md). undici is a CommonJS package, so it loads synchronously.
 */
export function undici(): Undici {
  loaded ??= createRequire(import.meta.url)('undici') as Undici;
  return loaded;
}

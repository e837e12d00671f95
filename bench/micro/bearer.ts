import type { IncomingMessage } from 'node:http';
import { readBearerToken } from '../../src/auth/bearer.ts';
import { interleaved, type Comparison } from './timing.ts';

const TOKEN =
  'eyJhbGciOiJFUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiJ1c2VyLTEiLCJzY29wZSI6ImN1c3RvbWVyczpyZWFkIn0.c2lnbmF0dXJlLXNpZ25hdHVyZS1zaWduYXR1cmUtc2lnbmF0dXJlLXNpZ25hdHVyZQ';
const HEADER = `Bearer ${TOKEN}`;
const req = {
  headers: { host: '127.0.0.1:8080', accept: 'application/json', authorization: HEADER },
  rawHeaders: ['Host', '127.0.0.1:8080', 'User-Agent', 'wrk', 'Accept', 'application/json', 'Authorization', HEADER],
} as unknown as IncomingMessage;
const BEARER = /^Bearer +([A-Za-z0-9\-._~+/]+=*)$/i;

/** Bearer parsing: ours (scheme check by char codes, duplicate-header check, no regex) vs a regex. */
export function bearer(ms: number): Comparison {
  return {
    title: 'Bearer parsing',
    choice:
      'hypergate: readBearerToken (src/auth/bearer.ts) checks the scheme by slicing and char codes, counts Authorization headers, and leaves the b64token regex to tokens the cache has not seen.',
    rows: interleaved(
      [
        ['readBearerToken (hypergate)', () => readBearerToken(req, 8192)],
        ['regex with b64token syntax', () => BEARER.exec(req.headers.authorization as string)?.[1]],
        ["split(' ')[1] (no checks at all)", () => (req.headers.authorization as string).split(' ')[1]],
      ],
      ms,
    ),
  };
}

import { Representation } from '../../src/cache/representation.ts';
import { hitStatus } from '../../src/protocol/cache-status.ts';
import { interleaved, type Comparison } from './timing.ts';

const BODY = JSON.stringify({ id: 42, name: 'Ada Lovelace', status: 'active', links: { self: '/api/customers/42', orders: '/api/customers/42/orders' } });
/** Requests arrive ~33 µs apart (30k req/s): Age changes once every ~30,000 hits. */
const STEP_MS = 0.033;

/** A cache hit's header list: one shared list filled per answer with memoised Age/Cache-Status texts vs a list built per request. */
export function age(ms: number): Comparison {
  const stored = Date.now();
  const rep = new Representation(BODY, 'application/json', 'max-age=60', stored, stored + 60_000, 'Accept');
  const rebuild = (now: number): (string | number)[] => {
    const a = Math.max(0, Math.floor((now - stored) / 1000));
    return [
      'Content-Type',
      'application/json',
      'Cache-Control',
      'max-age=60',
      'ETag',
      rep.etag,
      'Age',
      String(a),
      'Content-Length',
      Buffer.byteLength(BODY),
      'Vary',
      'Accept',
      'Cache-Status',
      hitStatus(60 - a),
      'X-Request-Id',
      'req-1',
    ];
  };
  return {
    title: 'Cache hit with Age',
    choice:
      'hypergate: one header list per layout, shared by every representation and filled per answer with memoised Age and Cache-Status texts (src/cache/representation.ts): no list per entry, no garbage per whole-second Age; the request id goes in the last slot.',
    rows: interleaved(
      [
        [
          'shared list filled per answer + request-id slot (hypergate)',
          (i) => {
            const headers = rep.headers(rep.ageAt(stored + i * STEP_MS));
            headers[headers.length - 1] = 'req-1';
            return headers;
          },
        ],
        ['list rebuilt per request', (i) => rebuild(stored + i * STEP_MS)],
        [
          'JSON.stringify of the body per request (no cached Buffer)',
          () =>
            Buffer.from(
              JSON.stringify({ id: 42, name: 'Ada Lovelace', status: 'active', links: { self: '/api/customers/42', orders: '/api/customers/42/orders' } }),
            ),
        ],
      ],
      ms,
    ),
  };
}

import { IncomingMessage } from 'node:http';
import { Socket } from 'node:net';
import { HgResponse } from '../../src/protocol/response.ts';
import { interleaved, type Comparison } from './timing.ts';

const ORIGIN = 'https://app.example.com';
const EXPOSE = 'ETag, Cache-Status, Age, X-Request-Id, Retry-After, RateLimit, RateLimit-Policy, Location';
const BODY = Buffer.from('{"id":42,"name":"Ada Lovelace","status":"active","links":{"self":"/api/customers/42","orders":"/api/customers/42/orders"}}');
/** A cache hit's prepared list, as a representation hands it to writeHead (Vary already names Origin). */
const LIST: (string | number)[] = [
  'Vary',
  'Accept, Origin',
  'Content-Type',
  'application/json',
  'Cache-Control',
  'max-age=60',
  'ETag',
  '"T6klxb51Q6u7dlf6CN2PGzKWiJK"',
  'Age',
  '0',
  'Content-Length',
  BODY.length,
  'Cache-Status',
  'hypergate; hit; ttl=60',
  'X-Request-Id',
  'req-1',
];
const GRANT: readonly string[] = ['Vary', 'Origin', 'Access-Control-Allow-Origin', ORIGIN, 'Access-Control-Expose-Headers', EXPOSE];

/**
 * A cache hit's head and body written on a real HgResponse (no socket: node builds the head and
 * queues it) with cors.origins set: the CORS fields deferred into the flat list (hypergate) vs
 * set one by one with setHeader before it (node's slow header path), and without CORS.
 */
export function corsHead(ms: number): Comparison {
  const req = new IncomingMessage(new Socket());
  const write = (fill: (res: HgResponse) => void) => () => {
    const res = new HgResponse(req);
    fill(res);
    res.end(BODY);
    return res;
  };
  return {
    title: 'A hit with CORS (writeHead + end on an HgResponse)',
    choice: 'hypergate: the CORS fields deferred on the response and merged into the flat list (src/protocol/deferred-headers.ts).',
    rows: interleaved(
      [
        [
          'CORS deferred, merged into the flat list (hypergate)',
          write((res) => {
            res.deferHeaders(GRANT);
            res.writeHead(200, LIST);
          }),
        ],
        [
          'CORS by setHeader, then writeHead(200, flat list)',
          write((res) => {
            for (let i = 0; i < GRANT.length; i += 2) res.setHeader(GRANT[i]!, GRANT[i + 1]!);
            res.writeHead(200, LIST);
          }),
        ],
        ['no CORS: writeHead(200, flat list)', write((res) => res.writeHead(200, LIST))],
      ],
      ms,
    ),
  };
}

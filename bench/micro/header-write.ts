import { IncomingMessage, ServerResponse } from 'node:http';
import { Socket } from 'node:net';
import { interleaved, type Comparison } from './timing.ts';

const BODY = Buffer.from('{"id":42,"name":"Ada Lovelace","status":"active","links":{"self":"/api/customers/42","orders":"/api/customers/42/orders"}}');
const ETAG = '"Yx3mQ0c1b2a9d8e7f6g5h4i3j2k"';
const LIST: (string | number)[] = [
  'Content-Type',
  'application/json',
  'Cache-Control',
  'max-age=60',
  'ETag',
  ETAG,
  'Age',
  '3',
  'Content-Length',
  BODY.length,
  'Vary',
  'Accept',
  'Cache-Status',
  'hypergate; hit; ttl=57',
  'X-Request-Id',
  'req-1',
];
const OBJECT: Record<string, string | number> = {};
for (let i = 0; i < LIST.length; i += 2) OBJECT[LIST[i] as string] = LIST[i + 1] as string | number;

/**
 * Header writing on a real ServerResponse (no socket: node builds the head and queues it): one
 * flat array to writeHead vs an object vs setHeader per field.
 */
export function headerWrite(ms: number): Comparison {
  const req = new IncomingMessage(new Socket());
  const write = (fill: (res: ServerResponse) => void) => () => {
    const res = new ServerResponse(req);
    fill(res);
    res.end(BODY);
    return res;
  };
  return {
    title: 'Header writing (writeHead + end on a ServerResponse)',
    choice: 'hypergate: writeHead(200, flatArray) with a list prepared per entry (src/resources/kit.ts writeRepresentation).',
    rows: interleaved(
      [
        ['writeHead(200, flat array) (hypergate)', write((res) => res.writeHead(200, LIST))],
        ['writeHead(200, object)', write((res) => res.writeHead(200, OBJECT))],
        [
          'setHeader per field, then writeHead(200)',
          write((res) => {
            for (let i = 0; i < LIST.length; i += 2) res.setHeader(LIST[i] as string, LIST[i + 1] as string | number);
            res.writeHead(200);
          }),
        ],
      ],
      ms,
    ),
  };
}

/**
 * The upstream of the feature scenarios (bench/README.md "Scenarios"), in its own process:
 * `GET /accounts/<id>` and `GET /accounts?...` (a collection answering any query with the same
 * page of 20 accounts, for `query`), and `GET /download/<bytes>` (that many bytes, streamed from
 * one reused 64 KiB chunk, never held whole, for `download`). As the sample upstream, it counts
 * the requests it answers and reports the count over IPC.
 *
 *   node --import tsx bench/servers/features.ts <port>
 */
import { createServer, type ServerResponse } from 'node:http';

const port = Number(process.argv[2]);
const CHUNK = Buffer.alloc(64 * 1024, 'hypergate bench download\n');
const PAGE = 20;
const ACCOUNTS = 1000;
const ACCOUNT = /^\/accounts\/([1-9][0-9]{0,15})$/;
const DOWNLOAD = /^\/download\/([1-9][0-9]{0,15})$/;

function account(id: number): { id: number; name: string; status: string } {
  return { id, name: `Account ${id}`, status: id % 2 === 0 ? 'active' : 'closed' };
}

function json(res: ServerResponse, status: number, value: unknown): void {
  const body = JSON.stringify(value);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), 'cache-control': 'max-age=3600' });
  res.end(body);
}

/** Writes `left` bytes, waiting for 'drain' whenever the socket's buffer is full: memory stays at a chunk or two. */
function stream(res: ServerResponse, left: number): void {
  while (left > 0) {
    const n = Math.min(left, CHUNK.length);
    left -= n;
    if (!res.write(n === CHUNK.length ? CHUNK : CHUNK.subarray(0, n))) {
      res.once('drain', () => stream(res, left));
      return;
    }
  }
  res.end();
}

let requests = 0;
const server = createServer((req, res) => {
  requests++;
  const url = req.url ?? '';
  const path = url.split('?', 1)[0] as string;
  const one = ACCOUNT.exec(url);
  const download = DOWNLOAD.exec(url);
  if (req.method !== 'GET') return json(res, 405, { error: 'method not allowed' });
  if (path === '/accounts') return json(res, 200, { items: Array.from({ length: PAGE }, (_, i) => account(i + 1)), total: ACCOUNTS });
  if (one !== null) return json(res, 200, account(Number(one[1])));
  if (download !== null) {
    const bytes = Number(download[1]);
    res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': bytes });
    return stream(res, bytes);
  }
  return json(res, 404, { error: 'not found' });
});
server.keepAliveTimeout = 10_000; // outlive the gateway pool's idle time-out, as the sample upstream does
process.on('message', (message: { type?: string }) => {
  if (message.type === 'count') process.send?.({ type: 'count', requests });
});
process.on('disconnect', () => process.exit(0));
server.listen(port, '127.0.0.1');

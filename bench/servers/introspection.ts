/**
 * A token introspection endpoint (RFC 7662) for the `introspected` scenario, in its own process:
 * every token starting with `opaque-` is active, with the benchmark's read scope, for an hour;
 * any other is inactive. It counts the calls it answers and reports the count over IPC, so the
 * harness can check that a cached token makes none.
 *
 *   node --import tsx bench/servers/introspection.ts <port>
 */
import { createServer } from 'node:http';
import { SCOPE } from '../lib/jwt.ts';

const port = Number(process.argv[2]);
let requests = 0;
const server = createServer((req, res) => {
  requests++;
  let body = '';
  req.setEncoding('utf8');
  req.on('data', (chunk: string) => (body += chunk));
  req.on('end', () => {
    const token = new URLSearchParams(body).get('token') ?? '';
    const answer = token.startsWith('opaque-')
      ? { active: true, sub: `client-${token}`, scope: SCOPE, client_id: 'bench-client', exp: Math.floor(Date.now() / 1000) + 3600 }
      : { active: false };
    const out = JSON.stringify(answer);
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(out) });
    res.end(out);
  });
});
server.keepAliveTimeout = 10_000;
process.on('message', (message: { type?: string }) => {
  if (message.type === 'count') process.send?.({ type: 'count', requests });
});
process.on('disconnect', () => process.exit(0));
server.listen(port, '127.0.0.1');

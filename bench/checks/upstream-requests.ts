/**
 * Sends `count` requests through a real UpstreamClient, with forwarded claims and trace context, to
 * a real upstream, and prints how many were answered: the workload of hidden-classes.test.ts, run
 * there with V8's map log on.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ClaimTable } from '../../src/auth/claims.ts';
import { configWith } from '../../src/gateway/load-config.ts';
import { UpstreamClient } from '../../src/upstream/client.ts';
import { countArgument } from './map-log.ts';

const count = countArgument();
const server = createServer((req, res) => {
  res.setHeader('content-type', 'application/json');
  res.end(JSON.stringify({ id: 1, who: req.headers['x-who'] ?? null }));
});
await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
const { port } = server.address() as AddressInfo;
// A generous time-out: the map log slows everything down, and a loaded machine more so.
const config = configWith({
  upstream: { url: `http://127.0.0.1:${port}`, timeoutMs: 60_000, headers: { 'X-Fixed': 'yes' }, forwardClaims: { 'X-Who': 'sub' } },
}).upstream;
const client = new UpstreamClient(config, config.url as string, undefined, undefined, { name: 'upstream', claims: new ClaimTable(['sub']) });
let answered = 0;
for (let i = 0; i < count; i++) {
  const call = { requestId: `req-${i}`, traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01', claims: [`user-${i}`] };
  const result = await client.getJson(`/customers/${i}`, call, (json) => json as { who: string });
  if (result.found && result.value.who === `user-${i}`) answered++;
}
await client.close();
server.close();
process.stdout.write(String(answered));

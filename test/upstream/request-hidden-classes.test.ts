import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { assertNoHiddenClassPer, hiddenClassesMade, importFromSrc } from '../helpers/map-log.ts';

const REQUESTS = 5000;

/**
 * Regression (bench/RESULTS.md, memory): each upstream request's headers were `{ ...base }` with
 * x-request-id added, which V8 (Node 20) gave a hidden class of its own once optimised: a map, a
 * descriptor array and an enumeration cache (undici walks the headers' keys) in the old
 * generation per cache miss. A child process sends 5,000 requests through a real UpstreamClient,
 * with forwarded claims and trace context, to a real upstream, with V8's map log on.
 */
describe('requests to an upstream', () => {
  test('make no hidden class per request', async () => {
    const { stdout, madeFor } = await hiddenClassesMade([
      "import { createServer } from 'node:http';",
      importFromSrc('configWith', 'gateway/load-config.ts'),
      importFromSrc('UpstreamClient', 'upstream/client.ts'),
      "const server = createServer((req, res) => { res.setHeader('content-type', 'application/json'); res.end(JSON.stringify({ id: 1, who: req.headers['x-who'] ?? null })); });",
      "await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));",
      "const { port } = server.address() as { port: number };",
      "const config = configWith({ upstream: { url: `http://127.0.0.1:${port}`, headers: { 'X-Fixed': 'yes' }, forwardClaims: { 'X-Who': 'sub' } } }).upstream;",
      "const client = new UpstreamClient(config, config.url as string, undefined, undefined, { claims: ['sub'] });",
      'let answered = 0;',
      `for (let i = 0; i < ${REQUESTS}; i++) {`,
      "  const call = { requestId: `req-${i}`, traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01', claims: [`user-${i}`] };",
      '  const result = await client.getJson(`/customers/${i}`, call, (json) => json as { who: string });',
      '  if (result.found && result.value.who === `user-${i}`) answered++;',
      '}',
      'await client.close();',
      'server.close();',
      'process.stdout.write(String(answered));',
    ]);
    assert.equal(stdout, String(REQUESTS));
    assertNoHiddenClassPer(madeFor, REQUESTS, 'requests');
  });
});

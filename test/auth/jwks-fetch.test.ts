import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { fetchJwksJson, JwksFetchError } from '../../src/auth/jwks-fetch.ts';

/** The key set fetch on its own, against a real server: the bounded GET it shares with the upstream client. */
describe('fetching a key set', () => {
  let server: Server;
  let base: string;
  const accepts: (string | undefined)[] = [];
  before(async () => {
    server = createServer((req, res) => {
      accepts.push(req.headers.accept);
      if (req.url === '/drip') {
        res.writeHead(200, { 'content-type': 'application/json' });
        const timer = setInterval(() => res.write(' '), 10);
        res.on('close', () => clearInterval(timer));
        return;
      }
      if (req.url === '/moved') {
        res.writeHead(301, { location: '/jwks.json' });
        return void res.end();
      }
      res.writeHead(200, { 'content-type': 'application/jwk-set+json' });
      res.write('{"keys":');
      setImmediate(() => res.end('[]}'));
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  // Cuts the dripping answers too (their timers stop on 'close').
  after(() => server.close().closeAllConnections());

  const failureOf = async (path: string, timeoutMs = 10_000, maxBytes = 4096): Promise<JwksFetchError> => {
    try {
      await fetchJwksJson(`${base}${path}`, { timeoutMs, maxBytes });
    } catch (err) {
      assert.ok(err instanceof JwksFetchError);
      return err;
    }
    assert.fail('the fetch succeeded');
  };

  test('a key set sent in pieces is read whole, asked for as a JWK set', async () => {
    assert.deepEqual(await fetchJwksJson(`${base}/jwks.json?v=1`, { timeoutMs: 10_000, maxBytes: 4096 }), { keys: [] });
    assert.equal(accepts.at(-1), 'application/jwk-set+json, application/json');
  });

  test('a body dripped past the deadline is a time-out, though bytes keep coming', async () => {
    const failure = await failureOf('/drip', 200);
    assert.equal(failure.result, 'timeout');
    assert.match(failure.message, /no complete answer within 200 ms/);
  });

  test('a body that grows past the limit while it streams is too large', async () => {
    const failure = await failureOf('/drip', 10_000, 64);
    assert.equal(failure.result, 'too_large');
  });

  test('a redirect is not followed', async () => {
    const failure = await failureOf('/moved');
    assert.equal(failure.result, 'http_status');
    assert.equal(failure.message, 'HTTP 301 (redirects are not followed)');
  });
});

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startFixture, type Fixture } from '../helpers/fixture.ts';
import { rawExchange } from '../helpers/gateway.ts';

describe('keep-alive: every kind of answer leaves its connection idle, closed after server.keepAliveTimeoutMs', () => {
  let fx: Fixture;
  let token = '';
  let etag = '';
  before(async () => {
    fx = await startFixture({
      server: { keepAliveTimeoutMs: 200, headersTimeoutMs: 60_000, requestTimeoutMs: 60_000 },
      cors: { origins: ['https://a.example'] },
    });
    token = await fx.token();
    const r = await fetch(`${fx.gw.url}/api/customers/1`, { headers: { authorization: `Bearer ${token}` } });
    etag = r.headers.get('etag') ?? '';
    await r.text();
  });
  after(() => fx.close());
  const req = (path: string, extra = '', method = 'GET') => `${method} ${path} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${token}\r\n${extra}\r\n`;
  const cases: [string, () => string, number[]][] = [
    ['CORS preflight', () => req('/api/customers/1', 'Origin: https://a.example\r\nAccess-Control-Request-Method: GET\r\n', 'OPTIONS'), [204]],
    ['HEAD', () => req('/api/customers/1', '', 'HEAD'), [200]],
    ['304', () => req('/api/customers/1', `If-None-Match: ${etag}\r\n`), [304]],
    ['404', () => req('/nope'), [404]],
    ['405', () => req('/api/customers/1', '', 'POST'), [405]],
    ['401 (no token)', () => 'GET /api/customers/1 HTTP/1.1\r\nHost: x\r\n\r\n', [401]],
    ['Expect: 100-continue, no body', () => req('/api/customers/1', 'Expect: 100-continue\r\n'), [200]],
    [
      'pipelined GET+HEAD+404+304',
      () => req('/api/customers/2') + req('/api/customers/1', '', 'HEAD') + req('/nope') + req('/api/customers/1', `If-None-Match: ${etag}\r\n`),
      [200, 200, 404, 304],
    ],
    ['upstream error 502', () => req('/api/customers/77'), [502]],
  ];
  for (const [name, make, want] of cases) {
    test(name, async () => {
      fx.upstream.on('/customers/77', { kind: 'reset' });
      const { text, closed } = await rawExchange(fx.gw.port, make(), 2500);
      assert.deepEqual(
        [...text.matchAll(/HTTP\/1\.1 (\d{3}) /g)].map((m) => Number(m[1])),
        want,
        text.slice(0, 300),
      );
      assert.ok(closed, 'closed by the sweep');
    });
  }
});

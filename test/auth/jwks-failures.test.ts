import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ManualClock } from '../helpers/clock.ts';
import { bearer, get, startGateway, type RunningGateway } from '../helpers/gateway.ts';
import { assertProblem } from '../helpers/hostile.ts';
import { makeKey, signToken, startJwksServer, type JwksFault, type JwksServer, type TestKey } from '../helpers/keys.ts';
import { captureLog } from '../helpers/log.ts';
import { sample } from '../helpers/metrics.ts';
import { startTestUpstream, type TestUpstream } from '../helpers/upstream.ts';

/**
 * Item 6 of the hardening issue: a key server that fails is the gateway's trouble, not the
 * client's. Whatever way the JWKS fails, a token signed by the real key gets 503
 * HG_ERR_AUTH_KEYS_UNAVAILABLE with Retry-After (never 401 invalid_token, which tells clients to
 * throw good tokens away); the start-up warning names the URL and the cause.
 */
describe('a JWKS that cannot be had', () => {
  let key: TestKey;
  let upstream: TestUpstream;
  const running: Array<{ close(): Promise<void> }> = [];
  before(async () => {
    key = await makeKey('ES256');
    upstream = await startTestUpstream();
  });
  after(async () => {
    for (const r of running.reverse()) await r.close();
    await upstream.close();
  });

  async function jwksWith(fault: JwksFault | null, keys = [key.publicJwk]): Promise<JwksServer> {
    const jwks = await startJwksServer(keys);
    jwks.setFault(fault);
    running.push(jwks);
    return jwks;
  }

  async function gatewayOn(jwksUrl: string, auth: Record<string, unknown> = {}): Promise<{ gw: RunningGateway; log: ReturnType<typeof captureLog> }> {
    const log = captureLog();
    const gw = await startGateway({ upstream: { url: upstream.url }, auth: { jwksUrl, ...auth } }, { clock: new ManualClock(), logger: log.logger });
    running.push(gw);
    return { gw, log };
  }

  const cases: Array<[string, JwksFault | 'refused', Record<string, unknown>, string, RegExp]> = [
    ['answers 500', { kind: 'status', status: 500 }, {}, 'http_status', /HTTP 500/],
    ['answers 503', { kind: 'status', status: 503 }, {}, 'http_status', /HTTP 503/],
    ['redirects elsewhere', { kind: 'status', status: 302 }, {}, 'http_status', /HTTP 302 \(redirects are not followed\)/],
    [
      'answers an HTML page',
      { kind: 'body', contentType: 'text/html', body: '<html><body>Sign in</body></html>' },
      {},
      'not_json',
      /not JSON \(content-type text\/html\)/,
    ],
    ['answers JSON that is not a key set', { kind: 'body', contentType: 'application/json', body: '{"error":"maintenance"}' }, {}, 'not_jwks', /not a JWKS/],
    ['does not answer within auth.jwksTimeoutMs', { kind: 'hang' }, { jwksTimeoutMs: 200 }, 'timeout', /no complete answer within 200 ms/],
    ['refuses the connection', 'refused', {}, 'refused', /connection refused/],
    ['declares a body over auth.jwksMaxBytes', { kind: 'declared', bytes: 4096 }, { jwksMaxBytes: 2048 }, 'too_large', /larger than 2048 bytes/],
  ];
  for (const [name, fault, auth, result, cause] of cases) {
    test(`a JWKS that ${name} gives a valid token 503 keys-unavailable with Retry-After, and the warning names the URL and the cause`, async () => {
      // Nothing listens on port 9 of loopback: a fetch there is refused.
      const url = fault === 'refused' ? 'http://127.0.0.1:9/jwks.json' : (await jwksWith(fault)).url;
      const { gw, log } = await gatewayOn(url, auth);
      const res = await get(`${gw.url}/api/customers/1`, bearer(await signToken(key)));
      assertProblem(res, { status: 503, code: 'HG_ERR_AUTH_KEYS_UNAVAILABLE', headers: { 'retry-after': /^[1-9]\d*$/ } });
      assert.equal(res.headers['www-authenticate'], undefined, 'no challenge: the token was not found wanting');
      const warning = log.records().find((r) => r['event'] === 'jwks' && r['level'] === 40);
      assert.ok(warning, 'a start-up warning');
      assert.equal(warning['url'], url);
      assert.match(String(warning['msg']), new RegExp(`could not fetch the JWKS from ${url.replace(/[./]/g, '\\$&')}: `));
      assert.match(String(warning['cause']), cause);
      const metrics = await gw.gateway.metrics.text();
      assert.equal(sample(metrics, 'hypergate_jwks_fetches_total', { result }), 1);
      assert.equal(sample(metrics, 'hypergate_token_verifications_total', { result: 'keys_unavailable' }), 1);
      assert.equal(sample(metrics, 'hypergate_token_verifications_total', { result: 'invalid' }), 0);
    });
  }

  test('only a token that does not verify against a good key set is 401 invalid_token', async () => {
    const jwks = await jwksWith(null);
    const { gw } = await gatewayOn(jwks.url);
    const forged = `${(await signToken(key)).slice(0, -6)}AAAAAA`;
    assertProblem(await get(`${gw.url}/api/customers/1`, bearer(forged)), { status: 401, code: 'HG_ERR_AUTH_INVALID_TOKEN' });
    assert.equal((await get(`${gw.url}/api/customers/1`, bearer(await signToken(key)))).status, 200);
  });
});

import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, test } from 'node:test';
import { startFixture, type Fixture } from '../helpers/fixture.ts';
import { bearer, get, problemOf, send } from '../helpers/gateway.ts';
import { captureLog, type CapturedLog } from '../helpers/log.ts';
import { startTestUpstream, type TestUpstream } from '../helpers/upstream.ts';

/** A token-shaped string an upstream might echo back in an error page. */
const ECHOED_JWT = 'eyJhbGciOiJFUzI1NiJ9.eyJzdWIiOiJhbGljZSJ9.c2lnbmF0dXJlLW9mLWFsaWNl';

describe('what a failed upstream answer leaves in the log, and what the client sees', () => {
  let fx: Fixture;
  let catalogue: TestUpstream;
  let log: CapturedLog;
  let auth: Record<string, string>;
  const failures = () => log.records().filter((r) => r['msg'] === 'request failed');

  before(async () => {
    log = captureLog();
    catalogue = await startTestUpstream();
    fx = await startFixture(
      {
        upstreams: { catalogue: { url: catalogue.url, headers: { 'X-Api-Key': 'catalogue-api-key-9f8e7d' } } },
        resources: {
          products: {
            path: '/api/products/{sku}',
            params: { sku: 'string' },
            upstream: '/products/{sku}',
            service: 'catalogue',
            record: '/data',
            fields: ['sku'],
          },
        },
      },
      { logger: log.logger },
    );
    auth = bearer(await fx.token());
  });
  beforeEach(() => {
    log.lines.length = 0;
  });
  after(async () => {
    // The catalogue first: it is up even when the gateway could not start.
    await catalogue?.close();
    await fx?.close();
  });

  test("the log line of a failed answer carries a capped, sanitized snippet of the upstream's own body", async () => {
    const body = `{"error":"db down\u0007","token":"${ECHOED_JWT}","auth":"Bearer abc.def","key":"catalogue-api-key-9f8e7d","line":"a\nb","pad":"${'x'.repeat(2000)}"}`;
    catalogue.on('/products/sku-1', { kind: 'raw', status: 500, body, headers: { 'content-type': 'application/json' } });
    const res = await get(`${fx.gw.url}/api/products/sku-1`, auth);
    assert.equal(res.status, 502);
    assert.equal(problemOf(res).detail, 'The upstream service answered with status 500.');
    assert.doesNotMatch(res.text, /db down|catalogue/);
    const [line] = failures();
    assert.ok(line !== undefined, 'a request failed line');
    assert.equal(line['service'], 'catalogue');
    assert.equal(line['upstreamStatus'], 500);
    const snippet = String(line['upstreamBody']);
    assert.match(
      snippet,
      /^\{"error":"db down\\u0007","token":"\[redacted\]","auth":"Bearer \[redacted\]","key":"\[redacted\]","line":"a\\u000ab","pad":"x+… \(\d+ bytes in all\)$/,
    );
    assert.ok(Buffer.byteLength(snippet.slice(0, snippet.indexOf('…'))) <= 512, 'at most 512 bytes of the body');
    assert.doesNotMatch(log.lines.join('\n'), new RegExp(`${ECHOED_JWT}|catalogue-api-key-9f8e7d`));
  });

  test('so does the log line of a write the upstream failed', async () => {
    fx.upstream.on('PATCH /customers/3', { kind: 'raw', status: 500, body: 'disk full', headers: { 'content-type': 'text/plain' } });
    const writer = bearer(await fx.token({ claims: { scope: 'customers:read customers:write' } }));
    const res = await send(
      `${fx.gw.url}/api/customers/3`,
      'PATCH',
      { ...writer, 'content-type': 'application/merge-patch+json', 'if-match': '*' },
      '{"status":"active"}',
    );
    assert.equal(res.status, 502);
    assert.equal(problemOf(res).detail, 'The upstream service answered the PATCH with status 500.');
    const [line] = failures();
    assert.deepEqual([line?.['service'], line?.['upstreamStatus'], line?.['upstreamBody']], ['upstream', 500, 'disk full']);
  });

  test('a body that is not JSON is logged too, and a short one whole', async () => {
    catalogue.on('/products/sku-2', { kind: 'raw', status: 503, body: '<html>Service Unavailable</html>', headers: { 'content-type': 'text/html' } });
    assert.equal((await get(`${fx.gw.url}/api/products/sku-2`, auth)).status, 502);
    assert.equal(failures()[0]?.['upstreamBody'], '<html>Service Unavailable</html>');
  });

  test('a 502 detail never names the internal service; the log does', async () => {
    catalogue.on('/products/sku-4', { kind: 'json', body: { data: { title: 'no sku' } } });
    catalogue.on('/products/sku-5', { kind: 'reset' });
    for (const sku of ['sku-4', 'sku-5']) {
      const res = await get(`${fx.gw.url}/api/products/${sku}`, auth);
      assert.equal(res.status, 502, sku);
      assert.doesNotMatch(problemOf(res).detail, /catalogue/, sku);
      assert.match(problemOf(res).detail, /^The upstream service /, sku);
    }
    assert.deepEqual(
      failures().map((r) => r['service']),
      ['catalogue', 'catalogue'],
    );
  });

  test('a record pointer that matches nothing is named in the log; the client gets the same safe 502', async () => {
    catalogue.on('/products/sku-6', { kind: 'json', body: { sku: 'sku-6' } });
    const res = await get(`${fx.gw.url}/api/products/sku-6`, auth);
    assert.equal(res.status, 502);
    assert.equal(problemOf(res).detail, 'The upstream service sent an invalid products record: not a JSON object.');
    assert.equal(failures()[0]?.['reason'], 'the record pointer "/data" (resources.products.record) matches nothing in the upstream\'s answer');
  });
});

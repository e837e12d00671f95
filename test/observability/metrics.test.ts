import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startFixture, type Fixture } from '../helpers/fixture.ts';
import { bearer, get } from '../helpers/gateway.ts';
import { sample } from '../helpers/metrics.ts';
import { RequestStats } from '../../src/observability/request-stats.ts';

describe('metrics on the admin listener', () => {
  let fx: Fixture;
  let metrics: string;
  const route = '/api/customers/:id';

  before(async () => {
    fx = await startFixture({ admin: { port: 0 } });
    const auth = bearer(await fx.token());
    for (const id of [1, 1, 1, 2]) assert.equal((await get(`${fx.gw.url}/api/customers/${id}`, auth)).status, 200);
    assert.equal((await get(`${fx.gw.url}/api/customers/3`)).status, 401);
    assert.equal((await get(`${fx.gw.url}/nowhere`, auth)).status, 404);
    assert.equal((await get(`${fx.gw.url}/api/customers/4`, auth, 'HEAD')).status, 200);
    const scrape = await get(`${fx.gw.adminUrl}/metrics`);
    assert.equal(scrape.status, 200);
    assert.match(String(scrape.headers['content-type']), /^text\/plain; version=0\.0\.4/);
    metrics = scrape.text;
  });
  after(() => fx.close());

  it('counts requests by route pattern, method and status', () => {
    assert.equal(sample(metrics, 'hypergate_http_requests_total', { route, method: 'GET', status: '200' }), 4);
    assert.equal(sample(metrics, 'hypergate_http_requests_total', { route, method: 'GET', status: '401' }), 1);
    assert.equal(sample(metrics, 'hypergate_http_requests_total', { route, method: 'HEAD', status: '200' }), 1);
    assert.equal(sample(metrics, 'hypergate_http_requests_total', { route: 'unmatched', method: 'GET', status: '404' }), 1);
  });

  it('counts a 405 on a known path under its route pattern, not as unmatched', async () => {
    assert.equal((await get(`${fx.gw.url}/api/customers/9`, {}, 'POST')).status, 405);
    const text = (await get(`${fx.gw.adminUrl}/metrics`)).text;
    assert.equal(sample(text, 'hypergate_http_requests_total', { route, method: 'POST', status: '405' }), 1);
    assert.equal(sample(text, 'hypergate_http_requests_total', { route: 'unmatched', method: 'POST', status: '405' }), undefined);
  });

  it('has a latency histogram whose count and +Inf bucket match the requests', () => {
    const labels = { route, method: 'GET', status: '200' };
    assert.equal(sample(metrics, 'hypergate_http_request_duration_seconds_count', labels), 4);
    assert.equal(sample(metrics, 'hypergate_http_request_duration_seconds_bucket', { ...labels, le: '+Inf' }), 4);
    assert.ok((sample(metrics, 'hypergate_http_request_duration_seconds_sum', labels) ?? -1) > 0);
  });

  it('counts cache hits, misses and entries', () => {
    assert.equal(sample(metrics, 'hypergate_cache_hits_total'), 2);
    assert.equal(sample(metrics, 'hypergate_cache_misses_total'), 3);
    // Three customers, one entry each: a format is rendered into its entry when first asked for.
    assert.equal(sample(metrics, 'hypergate_cache_entries'), 3);
    assert.equal(sample(metrics, 'hypergate_cache_evictions_total'), 0);
    assert.equal(sample(metrics, 'hypergate_cache_stale_total'), 0);
  });

  it('counts upstream requests by outcome with their latency', () => {
    assert.equal(sample(metrics, 'hypergate_upstream_requests_total', { outcome: 'ok' }), 3);
    assert.equal(sample(metrics, 'hypergate_upstream_request_duration_seconds_count', { outcome: 'ok' }), 3);
  });

  it('counts token verifications and token-cache hits', () => {
    assert.equal(sample(metrics, 'hypergate_token_verifications_total', { result: 'ok' }), 1);
    assert.equal(sample(metrics, 'hypergate_token_verifications_total', { result: 'invalid' }), 0);
    assert.equal(sample(metrics, 'hypergate_token_cache_hits_total'), 4);
  });

  it('reports no request in flight once all are answered, and process metrics', () => {
    assert.equal(sample(metrics, 'hypergate_http_requests_in_flight'), 0);
    assert.ok(sample(metrics, 'process_cpu_user_seconds_total') !== undefined);
    assert.ok(sample(metrics, 'nodejs_heap_size_used_bytes') !== undefined);
  });

  it('shows the breaker state once a breaker reports through the hook', async () => {
    let state: 'closed' | 'open' = 'closed';
    fx.gw.gateway.metrics.setBreakerStateSource(() => [['upstream', state]]);
    assert.equal(sample((await get(`${fx.gw.adminUrl}/metrics`)).text, 'hypergate_upstream_breaker_state'), 0);
    state = 'open';
    assert.equal(sample((await get(`${fx.gw.adminUrl}/metrics`)).text, 'hypergate_upstream_breaker_state'), 2);
  });

  it('is not reachable through the public port', async () => {
    for (const path of ['/metrics', '/healthz', '/readyz', '/cache']) {
      const res = await get(`${fx.gw.url}${path}`, bearer(await fx.token()));
      assert.equal(res.status, 404, path);
    }
  });
});

describe('request tallies (RequestStats)', () => {
  it('counts each route, method and status apart, however the requests interleave', () => {
    const stats = new RequestStats();
    const a = stats.routeIndex('/a/:id');
    const b = stats.routeIndex('/b');
    const seen: [number, string, number][] = [
      [a, 'GET', 200],
      [a, 'GET', 200],
      [a, 'HEAD', 200],
      [a, 'GET', 404],
      [a, 'GET', 200],
      [b, 'GET', 200],
      [a, 'GET', 200],
      [-1, 'GET', 404],
      [-1, 'PUT', 404],
      [-1, 'GET', 404],
      [b, 'GET', 200],
    ];
    for (const [route, method, status] of seen) stats.observe(route, method, status, 0.3);
    const counts = Object.fromEntries([...stats.cells()].map((c) => [`${c.route} ${c.method} ${c.status}`, c.count]));
    assert.deepEqual(counts, {
      '/a/:id GET 200': 4,
      '/a/:id HEAD 200': 1,
      '/a/:id GET 404': 1,
      '/b GET 200': 2,
      'unmatched GET 404': 2,
      'unmatched PUT 404': 1,
    });
  });
});

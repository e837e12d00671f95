import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startFixture, type Fixture } from '../helpers/fixture.ts';
import { bearer, get } from '../helpers/gateway.ts';
import { sample } from '../helpers/metrics.ts';
import { gate, waitFor } from '../helpers/wait.ts';
import { Metrics } from '../../src/observability/metrics.ts';

/** The OpenTelemetry HTTP semantic conventions' advised boundaries for http.server.request.duration, in seconds. */
const OTEL_BOUNDS = ['0.005', '0.01', '0.025', '0.05', '0.075', '0.1', '0.25', '0.5', '0.75', '1', '2.5', '5', '7.5', '10', '+Inf'];
const SERVER = 'http_server_request_duration_seconds';

interface Series {
  readonly name: string;
  readonly labels: Record<string, string>;
  readonly value: number;
}

/**
 * A sample's value as Prometheus reads it (Go's ParseFloat): a decimal, or NaN and [+-]Inf in any
 * case (prom-client writes an event-loop lag it has not measured yet as `Nan`).
 */
function sampleValue(text: string): number | undefined {
  if (/^nan$/i.test(text)) return NaN;
  if (/^[+-]?inf(inity)?$/i.test(text)) return text.startsWith('-') ? -Infinity : Infinity;
  const value = Number(text);
  return /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(text) && !Number.isNaN(value) ? value : undefined;
}

/**
 * The Prometheus text exposition (format 0.0.4) read strictly: every line is a HELP, a TYPE
 * or a sample `name{label="value",...} number`; anything else fails the test.
 */
function parseExposition(text: string): { types: Map<string, string>; series: Series[] } {
  const types = new Map<string, string>();
  const series: Series[] = [];
  const sampleLine = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{((?:[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\\n]|\\.)*",?)*)\})? (\S+)$/;
  for (const line of text.split('\n')) {
    if (line === '') continue;
    const type = /^# TYPE ([a-zA-Z_:][a-zA-Z0-9_:]*) (counter|gauge|histogram|summary|untyped)$/.exec(line);
    if (type !== null) {
      types.set(type[1] as string, type[2] as string);
      continue;
    }
    if (line.startsWith('# HELP ')) continue;
    const m = sampleLine.exec(line);
    assert.ok(m !== null, `not an exposition line: ${line}`);
    const value = sampleValue(m[3] as string);
    assert.ok(value !== undefined, `not a number: ${line}`);
    const labels: Record<string, string> = {};
    for (const l of (m[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) labels[l[1] as string] = l[2] as string;
    series.push({ name: m[1] as string, labels, value });
  }
  return { types, series };
}

describe('cache outcomes per resource and the OpenTelemetry request-duration histogram, on a real gateway', () => {
  let fx: Fixture;
  let auth: Record<string, string>;
  const read = (path: string, method: 'GET' | 'HEAD' = 'GET') => get(`${fx.gw.url}${path}`, auth, method);
  const scrape = async () => {
    const res = await get(`${fx.gw.adminUrl}/metrics`);
    assert.equal(res.status, 200);
    return res.text;
  };
  const outcome = (text: string, outcome: string) => sample(text, 'hypergate_cache_requests_total', { resource: 'customers', outcome });

  before(async () => {
    // The breaker is off so that each upstream failure is met as set up.
    fx = await startFixture({ admin: { port: 0 }, upstream: { timeoutMs: 300, breaker: { failures: 0 } } });
    auth = bearer(await fx.token({ expiresIn: 24 * 3600 }));
  });
  after(() => fx.close());

  it('counts hits, misses and stale answers of a resource as Cache-Status tells them', async () => {
    const first = await read('/api/customers/1');
    assert.match(String(first.headers['cache-status']), /fwd=miss/);
    assert.match(String((await read('/api/customers/1')).headers['cache-status']), /^hypergate; hit; ttl=/);
    assert.match(String((await read('/api/customers/1', 'HEAD')).headers['cache-status']), /^hypergate; hit; ttl=/);
    assert.match(String((await read('/api/customers/2')).headers['cache-status']), /fwd=miss/);
    // Past max-age, the upstream fails: the expired entry answers (stale-if-error).
    fx.clock.advance(61_000);
    fx.upstream.on('/customers/1', { kind: 'json', status: 500, body: { error: 'boom' } });
    assert.match(String((await read('/api/customers/1')).headers['cache-status']), /fwd=stale/);
    // A miss the upstream fails with nothing stale to answer is still a miss.
    fx.upstream.on('/customers/3', { kind: 'json', status: 500, body: { error: 'boom' } });
    assert.equal((await read('/api/customers/3')).status, 502);
    const text = await scrape();
    assert.equal(outcome(text, 'hit'), 2);
    assert.equal(outcome(text, 'miss'), 3);
    assert.equal(outcome(text, 'stale'), 1);
    assert.equal(outcome(text, 'collapsed'), 0);
    fx.upstream.reset();
  });

  it("counts reads that rode on another request's fetch as collapsed", async () => {
    const held = gate();
    fx.upstream.on('/customers/43', { kind: 'wait', until: held.promise, then: { kind: 'json', body: { id: 43, name: 'N', status: 'active' } } });
    const before = await scrape();
    const answers = Promise.all([1, 2, 3].map(() => read('/api/customers/43')));
    // All three are waiting on the one upstream fetch (the token is cached: each joined it when it arrived).
    await waitFor(() => fx.gw.gateway.metrics.inFlight === 3, 'three reads waiting on the upstream');
    held.open();
    const statuses = (await answers).map((a) => String(a.headers['cache-status'])).sort();
    assert.deepEqual(statuses, ['hypergate; fwd=miss; stored', 'hypergate; fwd=miss; stored; collapsed', 'hypergate; fwd=miss; stored; collapsed']);
    const after = await scrape();
    assert.equal((outcome(after, 'collapsed') ?? 0) - (outcome(before, 'collapsed') ?? 0), 2);
    assert.equal((outcome(after, 'miss') ?? 0) - (outcome(before, 'miss') ?? 0), 1);
    fx.upstream.reset();
  });

  it('exports http_server_request_duration_seconds with the conventions buckets and labels', async () => {
    assert.equal((await get(`${fx.gw.url}/nowhere/42`, auth)).status, 404);
    const text = await scrape();
    const { types, series } = parseExposition(text);
    assert.equal(types.get(SERVER), 'histogram');
    const route = { http_request_method: 'GET', http_route: '/api/customers/:id', http_response_status_code: '200' };
    const buckets = series.filter((s) => s.name === `${SERVER}_bucket` && Object.entries(route).every(([k, v]) => s.labels[k] === v));
    assert.deepEqual(
      buckets.map((s) => s.labels['le']),
      OTEL_BOUNDS,
    );
    for (let i = 1; i < buckets.length; i++) assert.ok((buckets[i]?.value ?? -1) >= (buckets[i - 1]?.value ?? Infinity), 'cumulative buckets');
    // Seven 200s to GET /api/customers/:id: two misses, a hit, the stale answer, and three reads of one fetch.
    assert.equal(sample(text, `${SERVER}_count`, route), 7);
    assert.equal(buckets.at(-1)?.value, 7);
    assert.ok((sample(text, `${SERVER}_sum`, route) ?? -1) > 0);
    assert.equal(sample(text, `${SERVER}_count`, { ...route, http_request_method: 'HEAD' }), 1);
    assert.equal(sample(text, `${SERVER}_count`, { ...route, http_response_status_code: '502' }), 1);
    // A request that matched no route has no http_route, as the conventions ask.
    assert.equal(sample(text, `${SERVER}_count`, { http_request_method: 'GET', http_response_status_code: '404' }), 1);
    // The existing metrics are still there, with their own buckets.
    assert.equal(
      sample(text, 'hypergate_http_request_duration_seconds_bucket', { route: '/api/customers/:id', method: 'GET', status: '200', le: '0.0005' }) !== undefined,
      true,
    );
  });

  it('never puts a raw path in http_route', async () => {
    const { series } = parseExposition(await scrape());
    const routes = new Set(series.filter((s) => s.name.startsWith(SERVER)).map((s) => s.labels['http_route']));
    assert.ok(routes.has('/api/customers/:id'));
    for (const route of routes) if (route !== undefined) assert.doesNotMatch(route, /\/\d+(\/|$)|nowhere/, `a raw path: ${route}`);
  });
});

describe('http_server_request_duration_seconds from the request tallies', () => {
  it('places each duration under the conventions bounds, the existing histogram under its own', async () => {
    const metrics = new Metrics({ processMetrics: false });
    const route = metrics.requests.routeIndex('/things/:id');
    metrics.requests.observe(route, 'GET', 200, 70);
    metrics.requests.observe(route, 'GET', 200, 3);
    metrics.requests.observe(route, 'PROPFIND', 207, 8000);
    const text = await metrics.text();
    const labels = { http_request_method: 'GET', http_route: '/things/:id', http_response_status_code: '200' };
    const bucket = (le: string) => sample(text, `${SERVER}_bucket`, { ...labels, le });
    assert.deepEqual(['0.005', '0.05', '0.075', '10', '+Inf'].map(bucket), [1, 1, 2, 2, 2]);
    assert.equal(sample(text, `${SERVER}_sum`, labels), 0.073);
    // A method outside the known set is _OTHER, as the conventions name it.
    const other = { http_request_method: '_OTHER', http_route: '/things/:id', http_response_status_code: '207' };
    assert.deepEqual(
      ['5', '7.5', '10'].map((le) => sample(text, `${SERVER}_bucket`, { ...other, le })),
      [0, 0, 1],
    );
    const old = (le: string) => sample(text, 'hypergate_http_request_duration_seconds_bucket', { route: '/things/:id', method: 'GET', status: '200', le });
    assert.deepEqual(['0.0025', '0.005', '0.05', '0.1'].map(old), [0, 1, 1, 2]);
  });
});

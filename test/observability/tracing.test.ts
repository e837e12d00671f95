import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ROOT_CONTEXT } from '@opentelemetry/api';
import { SamplingDecision, TraceIdRatioBasedSampler } from '@opentelemetry/sdk-trace-base';
import { configWith } from '../../src/gateway/load-config.ts';
import { restartRequired } from '../../src/gateway/reload.ts';
import { startFixture, type Fixture } from '../helpers/fixture.ts';
import { bearer, get } from '../helpers/gateway.ts';
import { KIND, STATUS, startOtlpReceiver, type OtlpReceiver, type ReceivedSpan } from '../helpers/otlp-receiver.ts';
import { defaultRecord } from '../helpers/upstream.ts';
import { gate, waitFor } from '../helpers/wait.ts';
import { makeKey, signToken } from '../helpers/keys.ts';
import { redisSkip, startRedis } from '../helpers/redis.ts';

const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736';
const CALLER_SPAN = '00f067aa0ba902b7';
const SAMPLED_PARENT = `00-${TRACE_ID}-${CALLER_SPAN}-01`;

/** Tracing on, exporting to `receiver` at once (a batch of one, sent within 10 ms). */
function tracingTo(receiver: OtlpReceiver, exporter: Record<string, unknown> = {}): unknown {
  return { tracing: { enabled: true, exporter: { url: receiver.url, scheduledDelayMs: 10, maxExportBatchSize: 1, ...exporter } } };
}

/** Runs `body` with OTEL_* variables set (the SDK reads them when the gateway is made), then restores them. */
async function withEnv<T>(vars: Record<string, string>, body: () => Promise<T>): Promise<T> {
  const before = Object.fromEntries(Object.keys(vars).map((k) => [k, process.env[k]]));
  Object.assign(process.env, vars);
  try {
    return await body();
  } finally {
    for (const [k, v] of Object.entries(before)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  }
}

function spansOfTrace(receiver: OtlpReceiver, traceId: string): ReceivedSpan[] {
  return receiver.spans.filter((s) => s.traceId === traceId);
}

function serverSpanOf(spans: readonly ReceivedSpan[]): ReceivedSpan {
  const server = spans.filter((s) => s.kind === KIND.SERVER);
  assert.equal(server.length, 1, `one SERVER span in ${JSON.stringify(spans.map((s) => s.name))}`);
  return server[0] as ReceivedSpan;
}

/** The INTERNAL spans right under `parent`, by name, each with what it says of itself (the token's source, the cache's outcome). */
function stepsUnder(spans: readonly ReceivedSpan[], parent: ReceivedSpan): Record<string, string | number | boolean | undefined> {
  const steps: Record<string, string | number | boolean | undefined> = {};
  for (const s of spans.filter((x) => x.parentSpanId === parent.spanId && x.kind === KIND.INTERNAL))
    steps[s.name] = s.attributes['hypergate.token'] ?? s.attributes['hypergate.cache.outcome'];
  return steps;
}

describe('OpenTelemetry traces', () => {
  let receiver: OtlpReceiver;
  let fx: Fixture;
  let auth: Record<string, string>;
  before(async () => {
    receiver = await startOtlpReceiver();
    fx = await withEnv({ OTEL_SERVICE_NAME: 'edge-gateway', OTEL_RESOURCE_ATTRIBUTES: 'deployment.environment=test' }, () => startFixture(tracingTo(receiver)));
    auth = bearer(await fx.token());
  });
  after(async () => {
    await fx.close();
    await receiver.close();
  });

  it('makes a SERVER span continuing the caller trace and a CLIENT span per attempt, whose id is the traceparent the upstream got', async () => {
    fx.upstream.reset();
    const res = await get(`${fx.gw.url}/api/customers/7?expand=none`, { ...auth, traceparent: SAMPLED_PARENT, 'user-agent': 'trace-test/1' });
    assert.equal(res.status, 200);
    await waitFor(() => spansOfTrace(receiver, TRACE_ID).some((s) => s.kind === KIND.SERVER), 'the SERVER span');
    const spans = spansOfTrace(receiver, TRACE_ID);
    const server = serverSpanOf(spans);
    assert.equal(server.name, 'GET /api/customers/:id');
    assert.equal(server.parentSpanId, CALLER_SPAN);
    assert.equal(server.status, STATUS.UNSET);
    assert.deepEqual(
      {
        method: server.attributes['http.request.method'],
        path: server.attributes['url.path'],
        scheme: server.attributes['url.scheme'],
        route: server.attributes['http.route'],
        status: server.attributes['http.response.status_code'],
        address: server.attributes['server.address'],
        port: server.attributes['server.port'],
        client: server.attributes['client.address'],
        agent: server.attributes['user_agent.original'],
        query: server.attributes['url.query'],
      },
      {
        method: 'GET',
        path: '/api/customers/7',
        scheme: 'http',
        route: '/api/customers/:id',
        status: 200,
        address: '127.0.0.1',
        port: fx.gw.port,
        client: '127.0.0.1',
        agent: 'trace-test/1',
        query: undefined,
      },
    );
    assert.deepEqual(server.resource['service.name'], 'edge-gateway');
    assert.deepEqual(server.resource['deployment.environment'], 'test');
    const client = spans.filter((s) => s.kind === KIND.CLIENT);
    assert.equal(client.length, 1);
    const attempt = client[0] as ReceivedSpan;
    assert.equal(attempt.parentSpanId, server.spanId);
    const upstreamUrl = new URL(fx.upstream.url);
    assert.equal(attempt.attributes['server.address'], upstreamUrl.hostname);
    assert.equal(attempt.attributes['server.port'], Number(upstreamUrl.port));
    assert.equal(attempt.attributes['url.full'], `${fx.upstream.url}/customers/7`);
    assert.equal(attempt.attributes['http.response.status_code'], 200);
    assert.equal(attempt.attributes['http.request.resend_count'], undefined);
    assert.deepEqual(stepsUnder(spans, server), { token: 'verified', 'cache lookup': 'miss' });
    // The upstream was told of the exported CLIENT span, not of the caller's.
    assert.equal(fx.upstream.headersSeen[0]?.['traceparent'], `00-${TRACE_ID}-${attempt.spanId}-01`);
    // Nothing of the token in any attribute.
    const token = String(auth['authorization']).slice('Bearer '.length);
    for (const span of spans) assert.ok(!JSON.stringify(span.attributes).includes(token));
  });

  it('keeps query values out of the spans: no url.query, and REDACTED values in url.full', async () => {
    const traceId = '77777777777777777777777777777777';
    fx.upstream.reset();
    const res = await get(`${fx.gw.url}/api/customers?offset=5&limit=3`, { ...auth, traceparent: `00-${traceId}-${CALLER_SPAN}-01` });
    assert.equal(res.status, 200);
    await waitFor(() => spansOfTrace(receiver, traceId).some((s) => s.kind === KIND.SERVER), 'the SERVER span of the collection');
    const spans = spansOfTrace(receiver, traceId);
    const server = serverSpanOf(spans);
    assert.equal(server.attributes['url.query'], undefined);
    assert.equal(server.attributes['url.path'], '/api/customers');
    const attempt = spans.find((s) => s.kind === KIND.CLIENT);
    const full = String(attempt?.attributes['url.full']);
    const sent = new URL(String(fx.upstream.paths[0]), fx.upstream.url);
    assert.notEqual(sent.search, '', 'the upstream was asked with a query');
    assert.equal(full, `${fx.upstream.url}${sent.pathname}?${[...sent.searchParams.keys()].map((k) => `${k}=REDACTED`).join('&')}`);
  });

  it('traces a cache hit without a CLIENT span', async () => {
    const traceId = 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa1';
    await get(`${fx.gw.url}/api/customers/8`, auth);
    const res = await get(`${fx.gw.url}/api/customers/8`, { ...auth, traceparent: `00-${traceId}-${CALLER_SPAN}-01` });
    assert.match(String(res.headers['cache-status']), /hit/);
    await waitFor(() => spansOfTrace(receiver, traceId).some((s) => s.kind === KIND.SERVER), 'the SERVER span of the hit');
    const spans = spansOfTrace(receiver, traceId);
    const server = serverSpanOf(spans);
    assert.equal(server.name, 'GET /api/customers/:id');
    assert.equal(server.attributes['hypergate.cache.outcome'], 'hit');
    assert.deepEqual(stepsUnder(spans, server), { token: 'cached', 'cache lookup': 'hit' });
    assert.equal(spans.filter((s) => s.kind === KIND.CLIENT).length, 0);
  });

  it('makes one CLIENT span per attempt of a retried miss, the second with http.request.resend_count 1', async () => {
    const traceId = 'bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb2';
    fx.upstream.reset();
    fx.upstream.on('/customers/9', { kind: 'sequence', steps: [{ kind: 'reset' }, { kind: 'json', body: defaultRecord(9) }] });
    const res = await get(`${fx.gw.url}/api/customers/9`, { ...auth, traceparent: `00-${traceId}-${CALLER_SPAN}-01` });
    assert.equal(res.status, 200);
    await waitFor(() => spansOfTrace(receiver, traceId).some((s) => s.kind === KIND.SERVER), 'the SERVER span of the retried miss');
    const spans = spansOfTrace(receiver, traceId);
    const server = serverSpanOf(spans);
    const attempts = spans.filter((s) => s.kind === KIND.CLIENT);
    assert.equal(attempts.length, 2);
    const [first, second] = attempts.sort(
      (a, b) => Number(a.attributes['http.request.resend_count'] ?? 0) - Number(b.attributes['http.request.resend_count'] ?? 0),
    ) as [ReceivedSpan, ReceivedSpan];
    assert.equal(first.parentSpanId, server.spanId);
    assert.equal(second.parentSpanId, server.spanId);
    assert.equal(first.status, STATUS.ERROR);
    assert.equal(first.attributes['error.type'], 'unreachable');
    assert.equal(second.attributes['http.request.resend_count'], 1);
    assert.equal(second.status, STATUS.UNSET);
    // The request that reached the upstream names the second attempt's span.
    assert.equal(fx.upstream.headersSeen.at(-1)?.['traceparent'], `00-${traceId}-${second.spanId}-01`);
  });

  it('marks a 5xx SERVER span as an error, and a 4xx answer leaves it unset', async () => {
    const traceId = 'ccccccccccccccccccccccccccccccc3';
    const notFoundTrace = 'ddddddddddddddddddddddddddddddd4';
    fx.upstream.reset();
    fx.upstream.on('/customers/10', { kind: 'json', status: 503, body: {} });
    const failed = await get(`${fx.gw.url}/api/customers/10`, { ...auth, traceparent: `00-${traceId}-${CALLER_SPAN}-01` });
    assert.equal(failed.status, 502);
    const missing = await get(`${fx.gw.url}/api/customers/11`, { traceparent: `00-${notFoundTrace}-${CALLER_SPAN}-01` });
    assert.equal(missing.status, 401);
    await waitFor(() => spansOfTrace(receiver, traceId).some((s) => s.kind === KIND.SERVER), 'the SERVER span of the 502');
    await waitFor(() => spansOfTrace(receiver, notFoundTrace).some((s) => s.kind === KIND.SERVER), 'the SERVER span of the 401');
    const server = serverSpanOf(spansOfTrace(receiver, traceId));
    assert.equal(server.status, STATUS.ERROR);
    assert.equal(server.attributes['error.type'], '502');
    const attempt = spansOfTrace(receiver, traceId).find((s) => s.kind === KIND.CLIENT);
    assert.equal(attempt?.status, STATUS.ERROR);
    assert.equal(attempt?.attributes['http.response.status_code'], 503);
    const unauthorized = serverSpanOf(spansOfTrace(receiver, notFoundTrace));
    assert.equal(unauthorized.status, STATUS.UNSET);
    assert.equal(unauthorized.attributes['http.response.status_code'], 401);
  });
});

describe('OpenTelemetry sampling', () => {
  let receiver: OtlpReceiver;
  before(async () => {
    receiver = await startOtlpReceiver();
  });
  after(() => receiver.close());

  /** Sends one request per traceparent through a gateway made under `sampler`, then closes it (which exports what is queued). */
  async function tracesUnder(
    sampler: Record<string, string>,
    traceparents: readonly (string | undefined)[],
  ): Promise<{ exported: Set<string>; seen: (string | undefined)[] }> {
    const fx = await withEnv(sampler, () => startFixture(tracingTo(receiver)));
    const auth = bearer(await fx.token());
    const seen: (string | undefined)[] = [];
    try {
      for (const [i, traceparent] of traceparents.entries()) {
        fx.upstream.reset();
        const res = await get(`${fx.gw.url}/api/customers/${100 + i}`, traceparent === undefined ? auth : { ...auth, traceparent });
        assert.equal(res.status, 200);
        const sent = fx.upstream.headersSeen[0]?.['traceparent'];
        seen.push(typeof sent === 'string' ? sent : undefined);
      }
    } finally {
      await fx.close();
    }
    return { exported: new Set(receiver.spans.map((s) => s.traceId)), seen };
  }

  it('exports nothing under always_off, and the upstream gets the caller traceparent as without tracing', async () => {
    const traceId = 'eeeeeeeeeeeeeeeeeeeeeeeeeeeeeee5';
    const traceparent = `00-${traceId}-${CALLER_SPAN}-01`;
    const { exported, seen } = await tracesUnder({ OTEL_TRACES_SAMPLER: 'always_off' }, [traceparent, undefined]);
    assert.equal(exported.has(traceId), false);
    assert.deepEqual(seen, [traceparent, undefined]);
  });

  it('follows a sampled caller and starts no trace of its own under parentbased_traceidratio 0', async () => {
    const followed = 'fffffffffffffffffffffffffffffff6';
    const unsampled = '1111111111111111111111111111111f';
    const before = receiver.spans.length;
    const { exported, seen } = await tracesUnder({ OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: '0' }, [
      `00-${followed}-${CALLER_SPAN}-01`,
      `00-${unsampled}-${CALLER_SPAN}-00`,
      undefined,
    ]);
    assert.equal(exported.has(followed), true);
    assert.equal(exported.has(unsampled), false);
    // Only the followed trace was exported: the request without a parent started none.
    assert.deepEqual(new Set(receiver.spans.slice(before).map((s) => s.traceId)), new Set([followed]));
    const client = receiver.spans.find((s) => s.traceId === followed && s.kind === KIND.CLIENT);
    assert.equal(seen[0], `00-${followed}-${client?.spanId}-01`);
    assert.equal(seen[1], `00-${unsampled}-${CALLER_SPAN}-00`);
    assert.equal(seen[2], undefined);
  });

  it('samples by trace id under traceidratio, as the specification ratio sampler decides', async () => {
    const ids = Array.from(
      { length: 12 },
      (_, i) => `${(i + 1).toString(16).padStart(2, '0')}${'7'.repeat(14)}${(i * 0x1357_9bdf).toString(16).padStart(16, '0').slice(-16)}`,
    );
    const expected = new Set(
      ids.filter((id) => new TraceIdRatioBasedSampler(0.5).shouldSample(ROOT_CONTEXT, id).decision === SamplingDecision.RECORD_AND_SAMPLED),
    );
    assert.ok(expected.size > 0 && expected.size < ids.length, 'the ids chosen are split by the ratio');
    const { exported } = await tracesUnder(
      { OTEL_TRACES_SAMPLER: 'traceidratio', OTEL_TRACES_SAMPLER_ARG: '0.5' },
      ids.map((id) => `00-${id}-${CALLER_SPAN}-01`),
    );
    assert.deepEqual(new Set(ids.filter((id) => exported.has(id))), expected);
  });
});

describe('tracing on reload', () => {
  it('is made at start: a reload that changes it says a restart is needed', () => {
    const initial = configWith({});
    const next = configWith({ tracing: { enabled: true, exporter: { maxQueueSize: 10 } } });
    assert.deepEqual(restartRequired(initial, next, initial, false), ['tracing.enabled', 'tracing.exporter']);
  });
});

describe('the exporter endpoint', () => {
  it('is OTEL_EXPORTER_OTLP_ENDPOINT followed by /v1/traces while tracing.exporter.url is null', async () => {
    const receiver = await startOtlpReceiver();
    const base = receiver.url.slice(0, -'/v1/traces'.length);
    const fx = await withEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: base }, () =>
      startFixture({ tracing: { enabled: true, exporter: { scheduledDelayMs: 10, maxExportBatchSize: 1 } } }),
    );
    try {
      const traceId = '99999999999999999999999999999999';
      assert.equal((await get(`${fx.gw.url}/api/customers/60`, { ...bearer(await fx.token()), traceparent: `00-${traceId}-${CALLER_SPAN}-01` })).status, 200);
      await waitFor(() => spansOfTrace(receiver, traceId).some((s) => s.kind === KIND.SERVER), 'the SERVER span at the endpoint the variable names');
    } finally {
      await fx.close();
      await receiver.close();
    }
  });
});

describe('a collector that is down or slow', () => {
  it('costs no request when nothing listens at the exporter URL', async () => {
    const gone = await startOtlpReceiver();
    await gone.close();
    const fx = await startFixture({ tracing: { enabled: true, exporter: { url: gone.url, scheduledDelayMs: 10, maxExportBatchSize: 1, timeoutMs: 500 } } });
    try {
      const auth = bearer(await fx.token());
      for (let i = 0; i < 20; i++) assert.equal((await get(`${fx.gw.url}/api/customers/${200 + (i % 5)}`, auth)).status, 200);
    } finally {
      await fx.close();
    }
  });

  it('answers every request while the collector holds its answers, dropping and counting the spans past the queue', async () => {
    const slow = await startOtlpReceiver();
    const held = slow.hold();
    const fx = await startFixture({
      tracing: { enabled: true, exporter: { url: slow.url, scheduledDelayMs: 10, maxExportBatchSize: 1, maxQueueSize: 4, timeoutMs: 60_000 } },
    });
    try {
      const auth = bearer(await fx.token());
      for (let i = 0; i < 20; i++) assert.equal((await get(`${fx.gw.url}/api/customers/${300 + i}`, auth)).status, 200);
      assert.ok(fx.gw.gateway.metrics.spansDropped > 0, 'spans past the queue are dropped');
      const text = await fx.gw.gateway.metrics.text();
      assert.match(text, /hypergate_trace_spans_dropped_total [1-9]/);
    } finally {
      held.release();
      await fx.close();
      await slow.close();
    }
  });
});

describe('OpenTelemetry span trees of a stale answer, a key refresh, a shared load and a Redis call', () => {
  let receiver: OtlpReceiver;
  before(async () => {
    receiver = await startOtlpReceiver();
  });
  after(() => receiver.close());

  /** The spans of `traceId` once its SERVER span arrived. */
  async function traceOf(traceId: string): Promise<{ spans: ReceivedSpan[]; server: ReceivedSpan }> {
    await waitFor(() => spansOfTrace(receiver, traceId).some((s) => s.kind === KIND.SERVER), `the SERVER span of ${traceId}`);
    const spans = spansOfTrace(receiver, traceId);
    return { spans, server: serverSpanOf(spans) };
  }

  it('traces a stale answer (stale-while-revalidate) from the cache, its refresh apart', async () => {
    const fx = await startFixture({ ...(tracingTo(receiver) as object), cache: { staleWhileRevalidateSeconds: 30 } });
    try {
      const auth = bearer(await fx.token({ expiresIn: 24 * 3600 }));
      await get(`${fx.gw.url}/api/customers/40`, auth);
      fx.clock.advance(fx.gw.gateway.config.cache.maxAgeSeconds * 1000 + 1000);
      const traceId = '22222222222222222222222222222222';
      const res = await get(`${fx.gw.url}/api/customers/40`, { ...auth, traceparent: `00-${traceId}-${CALLER_SPAN}-01` });
      assert.match(String(res.headers['cache-status']), /stale-while-revalidate/);
      const { spans, server } = await traceOf(traceId);
      assert.equal(server.attributes['hypergate.cache.outcome'], 'stale');
      assert.deepEqual(stepsUnder(spans, server), { token: 'cached', 'cache lookup': 'stale' });
      // The background refresh is a CLIENT span of the request that started it, under its SERVER span.
      await waitFor(() => spansOfTrace(receiver, traceId).some((s) => s.kind === KIND.CLIENT), 'the refresh attempt');
      const refresh = spansOfTrace(receiver, traceId).find((s) => s.kind === KIND.CLIENT);
      assert.equal(refresh?.parentSpanId, server.spanId);
    } finally {
      await fx.close();
    }
  });

  it('says when a token waited on a key refresh (a rotated key)', async () => {
    const fx = await startFixture(tracingTo(receiver));
    try {
      const rotated = await makeKey('ES256', 'rotated-for-trace');
      fx.jwks.setKeys([fx.key.publicJwk, rotated.publicJwk]);
      fx.clock.advance(fx.gw.gateway.config.auth.jwksCooldownMs);
      const traceId = '33333333333333333333333333333333';
      const token = await signToken(rotated, { nowSeconds: fx.clock.seconds });
      const res = await get(`${fx.gw.url}/api/customers/41`, { ...bearer(token), traceparent: `00-${traceId}-${CALLER_SPAN}-01` });
      assert.equal(res.status, 200);
      const { spans, server } = await traceOf(traceId);
      assert.equal(stepsUnder(spans, server)['token'], 'key refresh');
    } finally {
      await fx.close();
    }
  });

  it('links a request that waited on another request load to that request span', async () => {
    const fx = await startFixture(tracingTo(receiver));
    try {
      const auth = bearer(await fx.token());
      const held = gate();
      fx.upstream.on('/customers/42', { kind: 'wait', until: held.promise, then: { kind: 'json', body: defaultRecord(42) } });
      const leaderTrace = '44444444444444444444444444444444';
      const followerTrace = '55555555555555555555555555555555';
      const leader = get(`${fx.gw.url}/api/customers/42`, { ...auth, traceparent: `00-${leaderTrace}-${CALLER_SPAN}-01` });
      await waitFor(() => fx.upstream.active() === 1, 'the leader load to reach the upstream');
      const follower = get(`${fx.gw.url}/api/customers/42`, { ...auth, traceparent: `00-${followerTrace}-${CALLER_SPAN}-01` });
      await waitFor(() => fx.gw.gateway.metrics.inFlight === 2, 'the follower to wait');
      held.open();
      assert.deepEqual([(await leader).status, (await follower).status], [200, 200]);
      const lead = await traceOf(leaderTrace);
      const follow = await traceOf(followerTrace);
      const wait = follow.spans.find((s) => s.name === 'wait for load');
      assert.equal(wait?.parentSpanId, follow.server.spanId);
      assert.deepEqual(wait?.links, [{ traceId: leaderTrace, spanId: lead.server.spanId }]);
      assert.equal(follow.spans.filter((s) => s.kind === KIND.CLIENT).length, 0, 'the follower sent nothing upstream');
    } finally {
      await fx.close();
    }
  });

  it('makes each Redis call of the shared tier a CLIENT span (real redis-server)', { skip: redisSkip }, async () => {
    const redis = await startRedis();
    const fx = await startFixture({ ...(tracingTo(receiver) as object), redis: { url: redis.url, timeoutMs: 1000 } });
    try {
      const auth = bearer(await fx.token());
      const traceId = '66666666666666666666666666666666';
      const res = await get(`${fx.gw.url}/api/customers/43`, { ...auth, traceparent: `00-${traceId}-${CALLER_SPAN}-01` });
      assert.equal(res.status, 200);
      const { spans, server } = await traceOf(traceId);
      await waitFor(() => spansOfTrace(receiver, traceId).some((s) => s.name === 'redis tier_read'), 'the tier read span');
      const read = spansOfTrace(receiver, traceId).find((s) => s.name === 'redis tier_read');
      assert.equal(read?.kind, KIND.CLIENT);
      assert.equal(read?.parentSpanId, server.spanId);
      assert.equal(read?.attributes['db.system.name'], 'redis');
      assert.equal(read?.attributes['db.operation.name'], 'tier_read');
      assert.ok(
        spans.some((s) => s.kind === KIND.CLIENT && s.attributes['url.full'] !== undefined),
        'the upstream attempt after the tier miss',
      );
    } finally {
      await fx.close();
      await redis.close();
    }
  });
});

describe('B3 propagation', () => {
  it('continues a B3 caller and tells the upstream of the CLIENT span in both headers', async () => {
    const receiver = await startOtlpReceiver();
    const fx = await startFixture({
      tracing: { enabled: true, propagators: ['tracecontext', 'b3'], exporter: { url: receiver.url, scheduledDelayMs: 10, maxExportBatchSize: 1 } },
    });
    try {
      const traceId = '88888888888888888888888888888888';
      const res = await get(`${fx.gw.url}/api/customers/50`, { ...bearer(await fx.token()), b3: `${traceId}-${CALLER_SPAN}-1` });
      assert.equal(res.status, 200);
      await waitFor(() => spansOfTrace(receiver, traceId).some((s) => s.kind === KIND.SERVER), 'the SERVER span');
      const spans = spansOfTrace(receiver, traceId);
      assert.equal(serverSpanOf(spans).parentSpanId, CALLER_SPAN);
      const attempt = spans.find((s) => s.kind === KIND.CLIENT) as ReceivedSpan;
      const seen = fx.upstream.headersSeen[0];
      assert.equal(seen?.['b3'], `${traceId}-${attempt.spanId}-1`);
      assert.equal(seen?.['traceparent'], `00-${traceId}-${attempt.spanId}-01`);
    } finally {
      await fx.close();
      await receiver.close();
    }
  });
});

import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { ClaimTable } from '../../src/auth/claims.ts';
import { configWith } from '../../src/gateway/load-config.ts';
import { systemClock } from '../../src/lib/clock.ts';
import { Metrics } from '../../src/observability/metrics.ts';
import { problemBody } from '../../src/protocol/problem.ts';
import { compileResources } from '../../src/resources/compile.ts';
import { refusal } from '../../src/resources/write-upstream.ts';
import type { WriteOp } from '../../src/resources/write-op.ts';
import { UpstreamServices } from '../../src/upstream/services.ts';
import type { WriteResult } from '../../src/upstream/client.ts';

// The default declarations (customers, with a collection), compiled as a gateway compiles them. No
// request is sent: refusal() maps an answer already received.
const config = configWith({ upstream: { url: 'http://127.0.0.1:9' } });
const claims = ClaimTable.of(config);
const services = UpstreamServices.build(config, null, () => 'http://127.0.0.1:9', new Metrics(), systemClock, claims);
const customers = compileResources(config, services, claims).resources.find((r) => r.name === 'customers')!;
const item: WriteOp = { r: customers, method: 'PUT', collection: null, suffixes: [] };
const collection: WriteOp = { r: customers, method: 'POST', collection: customers.collection, suffixes: [] };

function answer(status: number, json?: unknown, problem = false): WriteResult {
  return { status, etag: null, freshness: { noStore: false, maxAgeSeconds: null, staleAllowed: true }, json, unreadable: null, problem };
}

describe("the upstream's refusal of a write, as our problem", () => {
  after(() => services.close());

  it("maps 404 to the resource's own not-found problem for an item, and to a plain 404 for its collection", () => {
    assert.equal(problemBody(refusal(item, answer(404))).code, 'HG_ERR_CUSTOMER_NOT_FOUND');
    const missing = refusal(collection, answer(404));
    assert.equal(missing.code, 'HG_ERR_ROUTE_NOT_FOUND');
    assert.match(missing.detail, /has no customers collection at this path\.$/);
  });

  it('maps 409, 412 and 428 to the same status, and 400 and 422 to 422', () => {
    assert.equal(refusal(item, answer(409)).code, 'HG_ERR_CONFLICT');
    assert.equal(refusal(item, answer(412)).code, 'HG_ERR_PRECONDITION_FAILED');
    const required = refusal(item, answer(428));
    assert.equal(required.code, 'HG_ERR_PRECONDITION_REQUIRED');
    assert.match(required.detail, /changes this customer only with If-Match\.$/);
    assert.equal(refusal(item, answer(400)).code, 'HG_ERR_UNPROCESSABLE');
    assert.equal(refusal(item, answer(422)).code, 'HG_ERR_UNPROCESSABLE');
  });

  it('maps any other status to 502, naming the method and the status', () => {
    for (const status of [500, 503, 401, 302]) {
      const err = refusal(item, answer(status));
      assert.equal(err.code, 'HG_ERR_UPSTREAM_BAD_GATEWAY');
      assert.match(err.detail, new RegExp(`answered the PUT with status ${status}\\.$`));
    }
  });

  it("carries the upstream's own detail only from application/problem+json, cleaned of control characters and cut at 500 characters", () => {
    const body = { detail: 'Name\u0000taken\n ' };
    assert.equal(refusal(item, answer(409, body, true)).detail, 'Name taken');
    assert.equal(refusal(item, answer(409, body, false)).detail, refusal(item, answer(409)).detail, 'not from plain JSON');
    assert.equal(refusal(item, answer(422, { detail: 'x'.repeat(600) }, true)).detail.length, 500);
    assert.equal(refusal(item, answer(422, { detail: '  ' }, true)).detail, refusal(item, answer(422)).detail, 'an empty detail is the default one');
  });
});

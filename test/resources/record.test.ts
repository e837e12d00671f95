import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, test } from 'node:test';
import { startFixture, type Fixture } from '../helpers/fixture.ts';
import { bearer, get } from '../helpers/gateway.ts';
import { assertProblem } from '../helpers/hostile.ts';
import { sample } from '../helpers/metrics.ts';
import { COLLECTION_TOTAL } from '../helpers/upstream.ts';

/** `depth` nested arrays around 1, as JSON text (JSON.stringify itself cannot write the deep ones). */
function nested(depth: number): string {
  return `${'['.repeat(depth)}1${']'.repeat(depth)}`;
}

describe('an upstream record as the resource the gateway renders', () => {
  let fx: Fixture;
  let token: string;
  before(async () => {
    fx = await startFixture({
      admin: { port: 0 },
      resources: { customers: { exposeFields: ['notes', 'referrerId'], links: { referrer: '/api/customers/{referrerId}' } } },
    });
    token = await fx.token();
  });
  beforeEach(() => fx.upstream.reset());
  after(() => fx.close());

  const read = (path: string) => get(`${fx.gw.url}${path}`, bearer(token));
  const outcome = async (name: string): Promise<number | undefined> =>
    sample((await get(`${fx.gw.adminUrl}/metrics`)).text, 'hypergate_upstream_requests_total', { service: 'upstream', outcome: name });

  // Regression: a 30,000-deep exposed field made rendering overflow the stack: 500 HG_ERR_INTERNAL,
  // and the upstream request was counted ok.
  test('an exposed field nested deeper than the gateway renders is a 502 counted as bad_body, not a 500 counted ok', async () => {
    const okBefore = (await outcome('ok')) ?? 0;
    const badBefore = (await outcome('bad_body')) ?? 0;
    fx.upstream.on('/customers/3', {
      kind: 'raw',
      status: 200,
      headers: { 'content-type': 'application/json' },
      body: `{"id":3,"name":"N","status":"active","notes":${nested(30_000)}}`,
    });
    const res = await read('/api/customers/3');
    assertProblem(res, { status: 502, code: 'HG_ERR_UPSTREAM_BAD_GATEWAY' });
    assert.match((res.json() as { detail: string }).detail, /notes is nested deeper than 1000 levels/);
    assert.equal((await outcome('ok')) ?? 0, okBefore);
    assert.equal((await outcome('bad_body')) ?? 0, badBefore + 1);
    // A field nested within the bound is rendered as it came.
    fx.upstream.on('/customers/4', {
      kind: 'raw',
      status: 200,
      headers: { 'content-type': 'application/json' },
      body: `{"id":4,"name":"N","status":"active","notes":${nested(900)}}`,
    });
    const deep = await read('/api/customers/4');
    assert.equal(deep.status, 200);
    assert.ok(deep.text.includes(nested(900)));
  });

  test('a deep field in a collection page is a 502 too, and the page is not stored', async () => {
    const items = [{ id: 1, name: 'N', status: 'active' }].map((r) => JSON.stringify(r).slice(0, -1) + `,"notes":${nested(5000)}}`);
    fx.upstream.on('/customers?offset=0&limit=1', {
      kind: 'raw',
      status: 200,
      headers: { 'content-type': 'application/json' },
      body: `{"items":[${items.join(',')}],"total":1}`,
    });
    assertProblem(await read('/api/customers?limit=1'), { status: 502, code: 'HG_ERR_UPSTREAM_BAD_GATEWAY' });
  });

  // Regression: a record field was checked only against a "string" parameter's characters, so
  // "abc" or 0 built /api/customers/abc, a link to a 404.
  test("a link's record value that does not fit the target parameter's type leaves the link out", async () => {
    const cases: [unknown, string | undefined][] = [
      [7, '/api/customers/7'],
      ['8', '/api/customers/8'],
      ['abc', undefined],
      [0, undefined],
      ['007', undefined],
      [-1, undefined],
      [1.5, undefined],
      ['9007199254740993', undefined],
    ];
    let id = 100;
    for (const [referrerId, expected] of cases) {
      id++;
      fx.upstream.on(`/customers/${id}`, { kind: 'json', body: { id, name: 'N', status: 'active', referrerId } });
      const res = await read(`/api/customers/${id}`);
      assert.equal(res.status, 200, JSON.stringify(referrerId));
      const links = (res.json() as { links: Record<string, string> }).links;
      assert.equal(links['referrer'], expected, `referrerId ${JSON.stringify(referrerId)}`);
      if (expected !== undefined) assert.equal((await read(expected)).status, 200, `following ${expected}`);
    }
  });

  // Regression: /api/customers?offset=1000&limit=20 linked prev to offset=980, another empty page.
  test('a page past the end links prev to the last page that has items, in its own alignment', async () => {
    const body = (await read('/api/customers?offset=1000&limit=20')).json() as { items: unknown[]; links: Record<string, string> };
    assert.deepEqual(body.items, []);
    assert.equal(body.links['prev'], '/api/customers?offset=40&limit=20');
    assert.equal(body.links['next'], undefined);
    const prev = (await read(body.links['prev'])).json() as { items: unknown[] };
    assert.equal(prev.items.length, COLLECTION_TOTAL - 40);
    const misaligned = (await read('/api/customers?offset=1001&limit=20')).json() as { links: Record<string, string> };
    assert.equal(misaligned.links['prev'], '/api/customers?offset=41&limit=20');
    // Just past the end: the page before is the last one, as before.
    const justPast = (await read('/api/customers?offset=50&limit=20')).json() as { links: Record<string, string> };
    assert.equal(justPast.links['prev'], '/api/customers?offset=30&limit=20');
  });

  test('a page past the end of an empty collection has no prev; one whose total is unknown has none either', async () => {
    fx.upstream.on('/customers?offset=60&limit=20', { kind: 'json', body: { items: [], total: 0 } });
    const empty = (await read('/api/customers?offset=60&limit=20')).json() as { links: Record<string, string> };
    assert.equal(empty.links['prev'], undefined);
    assert.equal(empty.links['first'], '/api/customers?offset=0&limit=20');
    const unknown = await startFixture({ resources: { customers: { collection: { total: null } } } });
    after(() => unknown.close());
    unknown.upstream.on('/customers?offset=60&limit=20', { kind: 'json', body: { items: [] } });
    const res = await get(`${unknown.gw.url}/api/customers?offset=60&limit=20`, bearer(await unknown.token()));
    assert.equal(res.status, 200);
    assert.equal((res.json() as { links: Record<string, string> }).links['prev'], undefined);
  });
});

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startFixture, type Fixture } from '../helpers/fixture.ts';
import { bearer, send } from '../helpers/gateway.ts';

const WRITE = 'customers:read customers:write customers:read:any';
const LARGE = 'x'.repeat(60_000);

/**
 * Without Redis the records live in the gateway, bounded by idempotency.maxBytes in all and by
 * idempotency.maxBytesPerSubject (1 MiB by default) for each subject: one user's many large
 * answers evict that user's own oldest records, never another user's.
 */
describe('in-memory Idempotency-Key records per subject', () => {
  let fx: Fixture;
  let mallory: Record<string, string>;
  let alice: Record<string, string>;
  const url = (path: string): string => `${fx.gw.url}${path}`;
  const posts = (): number => fx.upstream.requests.filter((r) => r.method === 'POST').length;

  before(async () => {
    fx = await startFixture({ idempotency: { maxBytes: 2 * 1024 * 1024 } });
    mallory = bearer(await fx.token({ claims: { sub: 'mallory', scope: WRITE } }));
    alice = bearer(await fx.token({ claims: { sub: 'alice', scope: WRITE } }));
  });
  after(() => fx.close());

  test("one subject's many large answers do not evict another subject's record", async () => {
    fx.upstream.on('POST /customers', { kind: 'json', status: 201, body: { id: 901, name: 'Alice', status: 'active' } });
    const keyed = { ...alice, 'content-type': 'application/json', 'idempotency-key': '"alice-once"' };
    const body = '{"name":"Alice","status":"active"}';
    assert.equal((await send(url('/api/customers'), 'POST', keyed, body)).status, 201);
    // 40 answers of 60 kB: more than idempotency.maxBytes holds.
    fx.upstream.on('PATCH /customers/902', { kind: 'json', body: { id: 902, name: LARGE, status: 'active' } });
    for (let n = 0; n < 40; n++) {
      const patched = await send(
        url('/api/customers/902'),
        'PATCH',
        { ...mallory, 'content-type': 'application/merge-patch+json', 'if-match': '*', 'idempotency-key': `"flood-${n}"` },
        '{"status":"active"}',
      );
      assert.equal(patched.status, 200);
    }
    const again = await send(url('/api/customers'), 'POST', keyed, body);
    assert.equal(again.status, 201);
    assert.equal(posts(), 1, "alice's retry was replayed, not sent again");
  });
});

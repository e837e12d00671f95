import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startFixture, type Fixture } from '../helpers/fixture.ts';
import { bearer, get, type HttpAnswer } from '../helpers/gateway.ts';
import { assertProblem } from '../helpers/hostile.ts';
import { sample } from '../helpers/metrics.ts';

const TWO_KB = 'x'.repeat(2048);

// Regression: a claim above U+00FF or with CR/LF made the upstream request fail before it was sent,
// counted as the service failing (five of them opened the breaker for everyone); a Latin-1 one went
// out as raw bytes; one over 256 characters was dropped and the request went on without it.
describe('forwarded claims: one encoding, and a value that cannot be sent refuses the request', () => {
  let fx: Fixture;
  let nextId = 100;
  before(async () => {
    fx = await startFixture({ upstream: { forwardClaims: { 'X-Name': 'name' } } });
  });
  after(() => fx.close());

  /** A miss (a customer not read before) on behalf of a token whose `name` is `name`; the headers the upstream saw for it, if any. */
  const readAs = async (name: unknown): Promise<{ answer: HttpAnswer; seen: string | string[] | undefined; asked: boolean }> => {
    const id = nextId++;
    const answer = await get(`${fx.gw.url}/api/customers/${id}`, bearer(await fx.token({ claims: { sub: `user-${id}`, name } })));
    const at = fx.upstream.paths.indexOf(`/customers/${id}`);
    return { answer, seen: at === -1 ? undefined : fx.upstream.headersSeen[at]?.['x-name'], asked: at !== -1 };
  };
  const breakerState = async (): Promise<number | undefined> =>
    sample(await fx.gw.gateway.metrics.text(), 'hypergate_upstream_breaker_state', { service: 'upstream' });

  test('values outside visible ASCII reach the upstream percent-encoded as UTF-8; visible ASCII goes as it is', async () => {
    const cases: [unknown, string][] = [
      ['Łukasz', '%C5%81ukasz'],
      ['José', 'Jos%C3%A9'],
      ['line\r\nX-Injected: yes', 'line%0D%0AX-Injected:%20yes'],
      ['100%', '100%25'],
      ['alice@example.com/x', 'alice@example.com/x'],
      [42, '42'],
    ];
    for (const [name, sent] of cases) {
      const { answer, seen } = await readAs(name);
      assert.equal(answer.status, 200, `${JSON.stringify(name)}: ${answer.text.slice(0, 200)}`);
      assert.equal(seen, sent, JSON.stringify(name));
      if (typeof name === 'string') assert.equal(decodeURIComponent(sent), name, 'one decodeURIComponent gives the claim back');
    }
  });

  test('a claim over upstream.maxClaimBytes, or not valid Unicode, is refused with a 400 before anything is sent', async () => {
    for (const name of [TWO_KB, 'é'.repeat(600), '\uD800lone']) {
      const { answer, asked } = await readAs(name);
      assertProblem(answer, { status: 400, code: 'HG_ERR_CLAIM_NOT_FORWARDABLE' });
      assert.equal(asked, false, 'the upstream never saw the request');
    }
  });

  test('many requests whose claims cannot be sent, or need encoding, never open the breaker for other users', async () => {
    for (let i = 0; i < 12; i++) {
      const { answer } = await readAs(i % 3 === 0 ? 'Łukasz' : i % 3 === 1 ? TWO_KB : 'a\r\nb');
      assert.equal(answer.status, i % 3 === 1 ? 400 : 200);
    }
    assert.equal(await breakerState(), 0, 'closed');
    const other = await readAs('bob');
    assert.equal(other.answer.status, 200);
    assert.equal(other.seen, 'bob');
  });

  test('a longer upstream.maxClaimBytes lets a long claim through whole', async () => {
    const roomy = await startFixture({ upstream: { forwardClaims: { 'X-Name': 'name' }, maxClaimBytes: 4096 } });
    try {
      const res = await get(`${roomy.gw.url}/api/customers/7`, bearer(await roomy.token({ claims: { name: TWO_KB } })));
      assert.equal(res.status, 200);
      assert.equal(roomy.upstream.headersSeen[0]?.['x-name'], TWO_KB);
    } finally {
      await roomy.close();
    }
  });
});

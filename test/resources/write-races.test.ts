import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, test } from 'node:test';
import { startFixture, type Fixture } from '../helpers/fixture.ts';
import { bearer, get, send, type HttpAnswer } from '../helpers/gateway.ts';
import { gate, waitFor } from '../helpers/wait.ts';

const json = { 'content-type': 'application/json' };

/**
 * A read load that began before a write is still running when the write is answered. Readers
 * that were waiting for it may get what it brings (they overlapped the write), but a read that
 * starts after the write's answer must not join it: it would read the version the write replaced.
 */
describe('a read after a write never joins a load that began before the write', () => {
  let fx: Fixture;
  let writer: Record<string, string>;
  let reader: Record<string, string>;
  const url = (path: string): string => `${fx.gw.url}${path}`;

  before(async () => {
    fx = await startFixture({ upstream: { timeoutMs: 10_000 } });
    writer = bearer(await fx.token({ claims: { scope: 'customers:read customers:write' } }));
    reader = bearer(await fx.token());
  });
  beforeEach(() => fx.upstream.reset());
  after(() => fx.close());

  /**
   * Starts `read` while the upstream holds the load under way, waits (bounded) for it either to
   * reach the upstream on its own or to be answered, then lets the held load finish.
   */
  async function readWhileHeld(held: { open(): void }, upstreamPath: string, read: () => Promise<HttpAnswer>): Promise<HttpAnswer> {
    const hitsBefore = fx.upstream.hits(upstreamPath);
    let answered = false;
    const pending = read().finally(() => (answered = true));
    // Joining the held load would wait for it: then neither happens, and the wait runs out.
    await waitFor(() => answered || fx.upstream.hits(upstreamPath) > hitsBefore, 'the read to go upstream on its own', 2000).catch(() => {});
    held.open();
    return pending;
  }

  test('a GET after a DELETE was answered is 404, not the customer a load begun before the DELETE brings', async () => {
    const held = gate();
    fx.upstream.on('GET /customers/77', { kind: 'wait', until: held.promise, then: { kind: 'json', body: { id: 77, name: 'Old', status: 'active' } } });
    const before = get(url('/api/customers/77'), reader);
    await waitFor(() => fx.upstream.active() === 1, 'the first load to reach the upstream');
    fx.upstream.on('DELETE /customers/77', { kind: 'raw', status: 204, body: '' });
    assert.equal((await send(url('/api/customers/77'), 'DELETE', { ...writer, 'if-match': '*' })).status, 204);
    fx.upstream.on('GET /customers/77', { kind: 'json', status: 404, body: {} });
    const afterDelete = await readWhileHeld(held, '/customers/77', () => get(url('/api/customers/77'), reader));
    assert.equal(afterDelete.status, 404, 'the read began after the DELETE was answered');
    assert.equal((await before).status, 200, 'the read that overlapped the DELETE may see the old version');
  });

  test('a page read after a POST was answered lists the created customer, not a page load begun before the POST', async () => {
    const page = '/customers?offset=0&limit=2';
    const held = gate();
    fx.upstream.on(`GET ${page}`, {
      kind: 'wait',
      until: held.promise,
      then: { kind: 'json', body: { items: [{ id: 1, name: 'A', status: 'active' }], total: 1 } },
    });
    const before = get(url('/api/customers?offset=0&limit=2'), reader);
    await waitFor(() => fx.upstream.active() === 1, 'the first page load to reach the upstream');
    fx.upstream.on('POST /customers', { kind: 'json', status: 201, body: { id: 2, name: 'B', status: 'active' } });
    assert.equal((await send(url('/api/customers'), 'POST', { ...writer, ...json }, '{"name":"B","status":"active"}')).status, 201);
    fx.upstream.on(`GET ${page}`, {
      kind: 'json',
      body: {
        items: [
          { id: 1, name: 'A', status: 'active' },
          { id: 2, name: 'B', status: 'active' },
        ],
        total: 2,
      },
    });
    const afterPost = await readWhileHeld(held, page, () => get(url('/api/customers?offset=0&limit=2'), reader));
    assert.deepEqual(
      (afterPost.json() as { items: { id: number }[] }).items.map((c) => c.id),
      [1, 2],
    );
    assert.equal((await before).status, 200);
  });
});

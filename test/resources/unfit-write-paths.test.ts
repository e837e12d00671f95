import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startFixture, type Fixture } from '../helpers/fixture.ts';
import { assertProblem, rawAnswer } from '../helpers/hostile.ts';

/** Notes on boards: a nested collection that takes POST, declared only here (the shipped config has none). */
const NOTES = {
  resources: {
    notes: {
      path: '/api/boards/{board}/notes/{n}',
      params: { board: 'string', n: 'integer' },
      upstream: '/boards/{board}/notes/{n}',
      fields: ['n', 'text'],
      rel: 'note',
      methods: ['GET', 'POST', 'DELETE'],
      collection: { path: '/api/boards/{board}/notes', upstream: '/boards/{board}/notes' },
    },
  },
};

describe('writes on a nested collection: a path whose parameter does not fit is no resource for any method', () => {
  let fx: Fixture;
  let token: string;
  before(async () => {
    fx = await startFixture(NOTES);
    token = await fx.token({ claims: { sub: 'ops', scope: 'customers:read notes:write' } });
  });
  after(() => fx.close());

  const answer = (method: string, path: string) =>
    rawAnswer(fx.gw.port, `${method} ${path} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${token}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n`);

  test('on a fitting board, OPTIONS lists POST on the collection and DELETE on an item', async () => {
    const collection = await answer('OPTIONS', '/api/boards/b-1/notes');
    assert.equal(collection.status, 204);
    assert.equal(collection.headers['allow'], 'GET, HEAD, POST');
    assert.equal((await answer('OPTIONS', '/api/boards/b-1/notes/3')).headers['allow'], 'GET, HEAD, DELETE');
  });

  test('on a board that is a dot-segment or an id that is not an integer, every method is the 404 of GET, and nothing reaches the upstream', async () => {
    for (const path of ['/api/boards/../notes', '/api/boards/./notes', '/api/boards/b%2D1/notes', '/api/boards/b-1/notes/x', '/api/boards/../notes/3']) {
      for (const method of ['OPTIONS', 'POST', 'DELETE', 'GET']) {
        const res = await answer(method, path);
        assertProblem(res, { status: 404, code: 'HG_ERR_ROUTE_NOT_FOUND' });
        assert.equal(res.headers['allow'], undefined, `${method} ${path}`);
      }
    }
    assert.equal(fx.upstream.hits(), 0);
  });
});

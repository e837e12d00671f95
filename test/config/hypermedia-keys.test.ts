import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { configProblems as problemsOf } from '../helpers/config.ts';
import { configWith } from '../../src/gateway/load-config.ts';

describe('config keys of the hypermedia surface', () => {
  test('defaults: ownership off, read-any scope customers:read:any, CORS off, orders expose their business fields', () => {
    const config = configWith({});
    assert.equal(config.auth.ownerClaim, null);
    assert.equal(config.auth.readAnyScope, 'customers:read:any');
    assert.deepEqual(config.cors.origins, []);
    assert.equal(config.cors.maxAgeSeconds, 600);
    assert.deepEqual(config.resources['orders']?.exposeFields, ['status', 'placedAt', 'total', 'currency']);
  });

  test('a CORS origin with a path, or not an origin at all, is refused naming the key', () => {
    const problems = problemsOf({ cors: { origins: ['https://app.example.com/', 'app.example.com', 'https://ok.example:8443', '*'] } });
    assert.equal(problems.length, 2);
    for (const p of problems) assert.match(p, /^cors\.origins: /);
  });

  test('reserved order fields and a read-any scope with spaces are refused', () => {
    const problems = problemsOf({ resources: { orders: { exposeFields: ['links', 'status'] } }, auth: { readAnyScope: 'a b' } });
    assert.ok(problems.some((p) => p.startsWith('resources.orders.exposeFields: "links"')));
    assert.ok(problems.some((p) => p.startsWith('auth.readAnyScope:')));
    assert.deepEqual(problemsOf({ resources: { orders: { exposeFields: ['status'] } } }), []);
  });
});

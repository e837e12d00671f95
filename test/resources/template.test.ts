import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { JsonPointer } from '../../src/resources/json-pointer.ts';
import { paramFromValue, parseStringParam, type ParamValue } from '../../src/resources/params.ts';
import { PathTemplate } from '../../src/resources/template.ts';

describe('path templates', () => {
  const orders = PathTemplate.parse('/api/customers/{customerId}/orders/{id}');

  test('compile to find-my-way routes and shapes', () => {
    assert.equal(orders.route, '/api/customers/:customerId/orders/:id');
    assert.equal(orders.shape, '/api/customers/{}/orders/{}');
    assert.deepEqual(orders.params, ['customerId', 'id']);
    assert.equal(PathTemplate.parse('/api').route, '/api');
  });

  test('match only the exact spelling, each parameter by its type', () => {
    const out: ParamValue[] = [];
    assert.equal(orders.match('/api/customers/42/orders/7', ['integer', 'integer'], out), true);
    assert.deepEqual(out, [42, 7]);
    for (const path of [
      '/api/customers/42/%6frders/7',
      '/api/customers/42/orders/07',
      '/api/customers/42/orders/7/',
      '/api/customers/42/orders',
      '/api/Customers/42/orders/7',
      '/api/customers/4%32/orders/7',
      '/api/customers/42/ordersX/7',
    ]) {
      assert.equal(orders.match(path, ['integer', 'integer'], []), false, path);
    }
  });

  test('build from values, and match what they built (property)', () => {
    const segment = fc.stringMatching(/^[A-Za-z0-9._~-]{1,64}$/).filter((s) => s !== '.' && s !== '..');
    fc.assert(
      fc.property(fc.integer({ min: 1, max: Number.MAX_SAFE_INTEGER }), segment, (n, s) => {
        const t = PathTemplate.parse('/shops/{shop}/items/{n}');
        const out: ParamValue[] = [];
        return t.match(t.build([s, n]), ['string', 'integer'], out) && out[0] === s && out[1] === n;
      }),
      { numRuns: 300 },
    );
  });

  test('refuse what is not a template, saying why', () => {
    assert.equal(PathTemplate.problem('api/x'), 'a path template starts with "/"');
    assert.equal(PathTemplate.problem('/a//b'), 'empty segment (a doubled or trailing "/")');
    assert.equal(PathTemplate.problem('/a/{x}/{x}'), 'the parameter {x} appears twice');
    assert.equal(PathTemplate.problem('/a/b:c'), '"b:c": literal segments use only A-Z a-z 0-9 - . _ ~');
    assert.match(PathTemplate.problem('/api/../x/{id}') ?? '', /^"\.\.": a dot-segment/);
    assert.match(PathTemplate.problem('/api/./x') ?? '', /^"\.": a dot-segment/);
    assert.equal(PathTemplate.problem('/api/.well-known/{id}'), null, 'a segment that only starts with a dot is literal text');
  });
});

describe('parameter values', () => {
  test('string parameters: 1 to 64 unreserved characters, nothing decoded', () => {
    assert.equal(parseStringParam('a-b.c_d~1'), 'a-b.c_d~1');
    for (const bad of ['', 'a%2D', 'a b', 'a/b', 'é', 'x'.repeat(65), '.', '..']) assert.equal(parseStringParam(bad), null, bad);
    assert.equal(parseStringParam('...'), '...', 'three dots are no dot-segment');
  });

  test('record values as parameters: a number or the canonical digits for integers; strings of the allowed characters', () => {
    assert.equal(paramFromValue('integer', 42), 42);
    assert.equal(paramFromValue('integer', '42'), 42);
    for (const bad of ['042', 4.2, -1, 0, '4e1', null, true]) assert.equal(paramFromValue('integer', bad), null, String(bad));
    assert.equal(paramFromValue('string', 'sku-1'), 'sku-1');
    assert.equal(paramFromValue('string', 7), '7');
    assert.equal(paramFromValue('string', 'a/b'), null);
  });
});

describe('JSON pointers (RFC 6901)', () => {
  const doc = { data: { 'a/b': 1, 'm~n': 2, list: [10, 20] }, '': 3 };

  test('resolve members, escaped names and array indices (section 5 examples)', () => {
    assert.deepEqual(JsonPointer.compile('').resolve(doc), doc);
    assert.equal(JsonPointer.compile('/data/a~1b').resolve(doc), 1);
    assert.equal(JsonPointer.compile('/data/m~0n').resolve(doc), 2);
    assert.equal(JsonPointer.compile('/data/list/1').resolve(doc), 20);
    assert.equal(JsonPointer.compile('/').resolve(doc), 3);
  });

  test('a missing member, a bad index or a walk through a scalar is undefined, never a throw', () => {
    for (const p of ['/nope', '/data/list/01', '/data/list/2', '/data/list/-', '/data/a~1b/x']) assert.equal(JsonPointer.compile(p).resolve(doc), undefined, p);
    assert.equal(JsonPointer.compile('/toString').resolve({}), undefined, 'inherited properties are not members');
  });

  test('a text that is not a pointer is refused', () => {
    assert.notEqual(JsonPointer.problem('data'), null);
    assert.notEqual(JsonPointer.problem('/a~'), null);
    assert.throws(() => JsonPointer.compile('/a~2'));
  });
});

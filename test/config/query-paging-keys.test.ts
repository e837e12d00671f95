import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { configWith } from '../../src/gateway/load-config.ts';
import { configProblems } from '../helpers/config.ts';

/** A collection to declare query parameters and paging on, one key at a time. */
function products(collection: Record<string, unknown> = {}, item: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    path: '/api/products/{sku}',
    params: { sku: 'string' },
    upstream: '/v2/products/{sku}',
    fields: ['sku'],
    collection: { path: '/api/products', upstream: '/v2/products', ...collection },
    ...item,
  };
}

const problems = (collection: Record<string, unknown>, item: Record<string, unknown> = {}, extra: Record<string, unknown> = {}): string[] =>
  configProblems({ resources: { products: products(collection, item) }, ...extra });

describe('query parameters and paging styles in config', () => {
  test("a declaration with every style's keys loads, and the shipped ones are unchanged", () => {
    const config = configWith({
      resources: {
        products: products({
          upstream: '/v2/products?per_page=100',
          total: { header: 'X-Total-Count' },
          paging: { style: 'cursor', cursorParam: 'starting_after', hasMore: '/has_more', lastKey: 'sku' },
          query: {
            q: { type: 'string', pattern: '[a-z]+', maxLength: 40 },
            sort: { type: 'enum', values: ['name', 'price'], default: 'name' },
            tag: { type: 'string', list: true, default: ['a', 'b'] },
          },
        }),
      },
    });
    assert.deepEqual(config.resources['products']?.collection?.total, { header: 'X-Total-Count' });
    assert.equal(config.resources['products']?.collection?.query['q']?.required, false);
    assert.equal(config.resources['customers']?.collection?.paging, null);
  });

  test('each declaration that cannot work is one line naming its key', () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ query: { limit: { type: 'integer' } } }, 'resources.products.collection.query.limit: "limit" is a paging parameter of the gateway\'s own'],
      [{ query: { 'a b': { type: 'string' } } }, 'resources.products.collection.query.a b: a query parameter name starts with a letter or _'],
      [{ query: { s: { type: 'enum' } } }, 'resources.products.collection.query.s.values: an "enum" parameter lists its values'],
      [{ query: { s: { type: 'string', values: ['a'] } } }, 'resources.products.collection.query.s.values: only an "enum" parameter has values'],
      [{ query: { n: { type: 'integer', min: 5, max: 1 } } }, 'resources.products.collection.query.n.min: greater than max (1)'],
      [{ query: { n: { type: 'string', min: 1 } } }, 'resources.products.collection.query.n: min and max bound an "integer" parameter only'],
      [{ query: { q: { type: 'string', pattern: '(' } } }, 'resources.products.collection.query.q: pattern is not a regular expression'],
      [{ query: { n: { type: 'integer', max: 3, default: 4 } } }, 'resources.products.collection.query.n: the default does not fit'],
      [{ query: { n: { type: 'integer', default: [1] } } }, 'resources.products.collection.query.n: a list default needs "list": true'],
      [{ query: { n: { type: 'integer', required: true, default: 1 } } }, 'resources.products.collection.query.n.default: a required parameter has no default'],
      [
        { query: { a: { type: 'integer', upstream: 'x' }, b: { type: 'integer', upstream: 'x' } } },
        'resources.products.collection.query.b.upstream: "x" is also sent for resources.products.collection.query.a',
      ],
      [
        { query: { size: { type: 'integer', upstream: 'offset' } } },
        'resources.products.collection.query.size.upstream: "offset" is also sent for the fixed query or paging',
      ],
      [{ upstream: '/v2/products?limit=5' }, 'resources.products.collection.upstream: the fixed query sets "limit", which paging sends'],
      [{ upstream: '/v2/products?a b' }, 'resources.products.collection.upstream: "a b" is not name=value'],
      [{ paged: false, paging: { style: 'page' } }, 'resources.products.collection.paging: set on a collection answered whole ("paged": false)'],
      [
        { paging: { style: 'cursor' } },
        'resources.products.collection.paging: the "cursor" style takes either next (a pointer to the next cursor) or hasMore with lastKey',
      ],
      [{ paging: { style: 'cursor', hasMore: '/has_more' } }, 'resources.products.collection.paging: hasMore and lastKey go together'],
      [{ paging: { style: 'link', next: '/next' } }, 'resources.products.collection.paging: next, hasMore and lastKey belong to the "cursor" style'],
      [{ paging: { style: 'offset', defaultLimit: 50, maxLimit: 10 } }, 'resources.products.collection.paging.defaultLimit: greater than maxLimit (10)'],
      [{ paging: { style: 'sideways' } }, 'resources.products.collection.paging.style: expected one of offset, page, cursor, link'],
      [{ total: { header: 'X Total' } }, 'resources.products.collection.total.header: not an HTTP header name'],
      [{ total: 5 }, 'resources.products.collection.total: expected a string or an object (header) or null'],
    ];
    for (const [collection, line] of cases) {
      const found = problems(collection);
      assert.ok(
        found.some((p) => p.startsWith(line)),
        `${JSON.stringify(collection)}: expected "${line}", got ${JSON.stringify(found)}`,
      );
    }
  });

  test("an item's query is checked the same way", () => {
    const found = problems({}, { query: { lang: { type: 'enum', values: [] } } });
    assert.ok(found.includes('resources.products.query.lang.values: expected at least one value'), JSON.stringify(found));
  });

  test('paging.cursorSecret must be set and at least 32 bytes, and is never shown', () => {
    assert.deepEqual(problems({}, {}, { paging: { cursorSecret: 'short-secret' } }), ['paging.cursorSecret: the value is shorter than 32 bytes']);
    assert.deepEqual(problems({}, {}, { paging: { cursorSecret: { env: 'HG_TEST_NO_SUCH_CURSOR_SECRET' } } }), [
      'paging.cursorSecret: the environment variable HG_TEST_NO_SUCH_CURSOR_SECRET is not set',
    ]);
    assert.deepEqual(problems({}, {}, { paging: { cursorSecret: 'x'.repeat(32) } }), []);
  });
});

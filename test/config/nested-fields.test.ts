import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { configProblems } from '../helpers/config.ts';
import { configWith } from '../../src/gateway/load-config.ts';

/** A product declaration with a collection that takes a brand filter, to break one key at a time. */
function products(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    path: '/api/products/{sku}',
    params: { sku: 'string' },
    upstream: '/v2/products/{sku}',
    fields: ['sku', { name: 'title', pointer: '/attributes/title' }],
    collection: { path: '/api/products', upstream: '/v2/products', query: { brand: { type: 'string' } } },
    ...overrides,
  };
}

const withProducts = (overrides: Record<string, unknown>): string[] => configProblems({ resources: { products: products(overrides) } });

describe('nested fields, dotted link names and query expressions in config', () => {
  test('a field entry may be a name or {"name", "pointer"}; links may name nested values and carry {?name}', () => {
    const config = configWith({
      resources: {
        products: products({
          exposeFields: [{ name: 'maker', pointer: '/attributes/maker' }],
          linkFields: [{ name: 'brand', pointer: '/relationships/brand/data/id' }],
          links: { maker: '/api/products/{maker.sku}', sameBrand: '/api/products{?brand}' },
        }),
      },
    });
    assert.deepEqual(config.resources['products']?.fields, ['sku', { name: 'title', pointer: '/attributes/title' }]);
  });

  test('an entry that is neither a name nor {"name", "pointer"} names its index', () => {
    assert.deepEqual(withProducts({ fields: ['sku', { name: 'title' }] }), ['resources.products.fields[1].pointer: expected a string, got undefined']);
  });

  test('a bad pointer, the whole record, or a public name with a dot is refused', () => {
    assert.deepEqual(withProducts({ fields: ['sku', { name: 'title', pointer: 'attributes/title' }] }), [
      'resources.products.fields[1].pointer: a JSON pointer is "" or starts with "/" (RFC 6901), got "attributes/title"',
    ]);
    assert.deepEqual(withProducts({ exposeFields: [{ name: 'all', pointer: '' }] }), [
      'resources.products.exposeFields[0].pointer: "" is the whole record; point at a value inside it',
    ]);
    assert.deepEqual(withProducts({ exposeFields: [{ name: 'a.b', pointer: '/a/b' }] }), [
      'resources.products.exposeFields: "a.b" is not a public field name (a letter, then letters, digits, - and _; dots in a link name read below a field)',
    ]);
  });

  test('a dotted link name must start at a declared field, never below a path parameter', () => {
    assert.deepEqual(withProducts({ links: { maker: '/api/products/{maker.sku}' } }), [
      'resources.products.links.maker: /api/products/{maker.sku} names {maker.sku}, which is neither a parameter of resources.products.path nor a declared field ("maker"); list it in resources.products.linkFields (read for links only) or in exposeFields',
    ]);
    assert.deepEqual(withProducts({ links: { again: '/api/products/{sku.x}' } }), [
      'resources.products.links.again: /api/products/{sku.x} names {sku.x}, but {sku} is a path parameter, which has no members',
    ]);
  });

  test('a query expression names only parameters the linked path declares, and takes no modifiers', () => {
    assert.deepEqual(withProducts({ exposeFields: ['colour'], links: { same: '/api/products{?colour}' } }), [
      'resources.products.links.same: /api/products{?colour} carries {?colour}, but the path it leads to declares no query parameter "colour" (following it would be a 400); declare it in that resource\'s query, or drop it from the template',
    ]);
    assert.deepEqual(withProducts({ exposeFields: ['brand'], links: { same: '/api/products{?brand*}' } }), [
      'resources.products.links.same: {?brand*}: "brand*" is not a variable name (letters, digits and _, dots between parts; no modifiers such as * or :3), got "/api/products{?brand*}"',
    ]);
  });

  test("readOnlyFields names exposed fields; a writable resource's renamed field must be read-only", () => {
    assert.deepEqual(withProducts({ readOnlyFields: ['titel'] }), [
      'resources.products.readOnlyFields: "titel" is not in resources.products.fields or resources.products.exposeFields; did you mean "title"?',
    ]);
    assert.deepEqual(withProducts({ methods: ['GET', 'PATCH'] }), [
      'resources.products.fields: "title" is taken from the pointer "/attributes/title", and resources.products.methods writes (PATCH): a write\'s body goes to the upstream as sent, so it would name "title" where the upstream keeps "/attributes/title"; list it in resources.products.readOnlyFields',
    ]);
    assert.deepEqual(withProducts({ methods: ['GET', 'PATCH'], readOnlyFields: ['title'] }), []);
  });
});

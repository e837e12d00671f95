import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, describe, test } from 'node:test';
import { PROJECT_ROOT } from '../../src/config/load.ts';
import { configProblems } from '../helpers/config.ts';
import { configWith } from '../../src/gateway/load-config.ts';

/** A valid declaration to break one key at a time. */
function products(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    path: '/api/products/{sku}',
    params: { sku: 'string' },
    upstream: '/v2/products/{sku}',
    fields: ['sku', 'title'],
    rel: 'product',
    collection: { path: '/api/products', upstream: '/v2/products', total: '/total' },
    ...overrides,
  };
}

const problemsWith = (resource: Record<string, unknown>, extra: Record<string, unknown> = {}): string[] =>
  configProblems({ resources: { products: resource }, ...extra });

describe('resources.<name> in config', () => {
  test('a valid declaration loads, with left-out keys filled in', () => {
    const config = configWith({ resources: { products: products() } });
    const p = config.resources['products'];
    assert.equal(p?.service, 'upstream');
    assert.equal(p?.record, '');
    assert.deepEqual(p?.exposeFields, []);
    assert.equal(p?.collection?.items, '/items');
    assert.equal(p?.collection?.paged, true);
    assert.equal(p?.owner, null);
  });

  test('a null entry removes a shipped resource, and a null link removes the link that led to it', () => {
    const config = configWith({ resources: { orders: null, customers: { links: { orders: null } } } });
    assert.deepEqual(Object.keys(config.resources), ['customers']);
    assert.deepEqual(config.resources['customers']?.links, {});
  });

  test('a link to a path no resource declares names the key and the template', () => {
    assert.deepEqual(problemsWith(products({ links: { maker: '/api/makers/{makerId}' }, linkFields: ['makerId'] })), [
      "resources.products.links.maker: /api/makers/{makerId} is not a path of this gateway (no resource's path or collection.path matches it), so following it would answer 404; declare that resource, or set the link to null to drop it",
    ]);
    assert.deepEqual(problemsWith(products({ collection: { path: '/api/products', upstream: '/v2/products', links: { home: '/api/shop' } } })), [
      "resources.products.collection.links.home: /api/shop is not a path of this gateway (no resource's path or collection.path matches it), so following it would answer 404; declare that resource, or set the link to null to drop it",
    ]);
  });

  test('removing a linked resource while the link to it stays is a problem', () => {
    assert.deepEqual(configProblems({ resources: { orders: null } }), [
      "resources.customers.links.orders: /api/customers/{id}/orders is not a path of this gateway (no resource's path or collection.path matches it), so following it would answer 404; declare that resource, or set the link to null to drop it",
    ]);
  });

  test('links to declared items, collections, literal ids and the API root load', () => {
    const config = configWith({
      resources: {
        products: products({
          links: { customer: '/api/customers/{ownerId}', first: '/api/customers/1', all: '/api/products', root: '/api' },
          linkFields: ['ownerId'],
        }),
      },
    });
    assert.deepEqual(Object.keys(config.resources['products']?.links ?? {}), ['customer', 'first', 'all', 'root']);
  });

  test('a template naming an unknown parameter names the key and the parameter', () => {
    assert.deepEqual(problemsWith(products({ upstream: '/v2/products/{skuu}' })), [
      'resources.products.upstream: {skuu} is not a parameter of resources.products.path',
    ]);
    assert.ok(
      problemsWith(products({ collection: { path: '/api/products', upstream: '/v2/{sku}/products' } })).includes(
        'resources.products.collection.upstream: {sku} is not a parameter of resources.products.collection.path',
      ),
    );
  });

  test('a parameter without a type, and a typed one the path lacks', () => {
    assert.deepEqual(problemsWith(products({ params: {} })), ['resources.products.params.sku: the path parameter {sku} has no type ("integer" or "string")']);
    assert.deepEqual(problemsWith(products({ params: { sku: 'string', other: 'integer' } })), [
      'resources.products.params.other: not a parameter of resources.products.path',
    ]);
    assert.match(problemsWith(products({ params: { sku: 'uuid' } }))[0] ?? '', /^resources\.products\.params\.sku: expected one of integer, string/);
  });

  test('two resources whose paths match the same requests collide', () => {
    const problems = configProblems({ resources: { products: products({ path: '/api/customers/{sku}', collection: null }) } });
    assert.deepEqual(problems, [
      'resources.products.path: /api/customers/{sku} collides with resources.customers.path (/api/customers/{id}) (the same paths would match both)',
    ]);
    assert.match(
      configProblems({ resources: { products: products({ collection: { path: '/api', upstream: '/x' } }) } }).join('\n'),
      /resources\.products\.collection\.path: \/api collides with the gateway's own \/api/,
    );
  });

  test("the shipped orders' field types stay valid when exposeFields leaves fields out; a misspelt field type is refused with a hint", () => {
    assert.deepEqual(configProblems({ resources: { orders: { exposeFields: ['status'] } } }), []);
    assert.deepEqual(problemsWith(products({ fieldTypes: { titel: 'string' } })), [
      'resources.products.fieldTypes.titel: not in resources.products.fields or resources.products.exposeFields; did you mean "title"?',
    ]);
  });

  test('a service that is not declared', () => {
    assert.deepEqual(problemsWith(products({ service: 'catalogue' })), [
      'resources.products.service: "catalogue" is not a declared service ("upstream" or a key of upstreams)',
    ]);
    assert.deepEqual(problemsWith(products({ service: 'catalogue' }), { upstreams: { catalogue: { url: 'http://127.0.0.1:9' } } }), []);
  });

  test('a pointer that is not a JSON pointer', () => {
    assert.deepEqual(problemsWith(products({ record: 'data' })), ['resources.products.record: a JSON pointer is "" or starts with "/" (RFC 6901), got "data"']);
    assert.deepEqual(problemsWith(products({ collection: { path: '/api/products', upstream: '/v2/products', items: '/a~2b' } })), [
      'resources.products.collection.items: in a JSON pointer "~" is followed by 0 or 1 (RFC 6901 section 3), got "/a~2b"',
    ]);
  });

  test('a rel used twice, or the same as a collection linked from the API root', () => {
    assert.deepEqual(problemsWith(products({ rel: 'customer' })), [
      'resources.products.rel: the API root relation "customer" is already used by resources.customers.rel',
    ]);
    assert.deepEqual(problemsWith(products({ rel: 'customers' })), [
      'resources.products.rel: the API root relation "customers" is already used by resources.customers (its collection is linked from the API root under the resource\'s name)',
    ]);
  });

  test('an owner.param that the path lacks', () => {
    assert.deepEqual(problemsWith(products({ owner: { claim: 'tenant', param: 'tenant' } })), [
      'resources.products.owner.param: {tenant} is not a parameter of resources.products.path',
    ]);
  });

  test('templates, fields and links that cannot work', () => {
    const problems = problemsWith(products({ path: '/api/products/x{sku}', links: { self: '/x', 'bad rel': '/y' }, exposeFields: ['links'] }));
    assert.ok(
      problems.includes(
        'resources.products.path: "x{sku}": a parameter is a whole segment, {name}, with a name of letters, digits and _, got "/api/products/x{sku}"',
      ),
      problems.join('\n'),
    );
    assert.ok(problems.includes('resources.products.links.self: "self" is always added and names the requested path'));
    assert.ok(problems.includes('resources.products.exposeFields: "links" is always part of the representation or reserved'));
    assert.equal(problemsWith(products({ path: '/api/products' }))[0], 'resources.products.path: an item path needs a parameter (its last one names the item)');
  });

  test("an upstream template without the item's own parameter, a field listed twice, a dot-segment in a template", () => {
    assert.deepEqual(problemsWith(products({ upstream: '/v2/products' })), [
      "resources.products.upstream: must name the item's own parameter {sku} (else every item reads the same upstream path)",
    ]);
    assert.deepEqual(problemsWith(products({ fields: ['sku', 'title', 'sku'], exposeFields: ['colour', 'colour'] })), [
      'resources.products.fields: "sku" is listed more than once',
      'resources.products.exposeFields: "colour" is listed more than once',
    ]);
    assert.match(problemsWith(products({ path: '/api/../products/{sku}' }))[0] ?? '', /^resources\.products\.path: "\.\.": a dot-segment/);
  });

  test("service headers: names are checked, the gateway's own are refused, and a value from an unset variable names the variable, not a value", () => {
    const problems = configProblems({
      upstream: { headers: { 'X Bad': 'v', Host: 'evil', 'X-Key': { env: 'HG_TEST_SURELY_UNSET_VARIABLE' } }, forwardClaims: { Authorization: 'sub' } },
    });
    assert.deepEqual(problems, [
      'upstream.headers.X Bad: not an HTTP header name (RFC 9110 section 5.1)',
      'upstream.headers.Host: the gateway sets this header itself',
      'upstream.headers.X-Key: the environment variable HG_TEST_SURELY_UNSET_VARIABLE is not set',
      'upstream.forwardClaims.Authorization: the gateway sets this header itself (use forwardAuthorization)',
    ]);
    assert.deepEqual(configProblems({ upstream: { headers: { 'X-Key': 'line\r\nbreak' } } }), [
      'upstream.headers.X-Key: the value is not a valid header value (no control characters, no leading or trailing space)',
    ]);
  });

  test('--check-config reports every problem of a resource table and exits 1', () => {
    const dir = mkdtempSync(join(tmpdir(), 'hypergate-resources-'));
    after(() => rmSync(dir, { recursive: true, force: true }));
    const file = join(dir, 'bad.json');
    writeFileSync(
      file,
      JSON.stringify({ resources: { products: products({ upstream: '/v2/{nope}', service: 'catalogue', rel: 'customer', record: 'data' }) } }),
    );
    const run = spawnSync(process.execPath, ['--import', 'tsx', resolve(PROJECT_ROOT, 'src/main.ts'), '--check-config', '--config', file], {
      cwd: PROJECT_ROOT,
      encoding: 'utf8',
      timeout: 20_000,
    });
    assert.equal(run.status, 1, run.stderr);
    const out = run.stdout + run.stderr;
    for (const key of ['resources.products.upstream', 'resources.products.service', 'resources.products.rel', 'resources.products.record'])
      assert.match(out, new RegExp(key.replaceAll('.', '\\.')));
    assert.match(out, /4 problem\(s\)/);
  });
});

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { PROJECT_ROOT } from '../../src/config/load.ts';
import { configWith } from '../../src/gateway/load-config.ts';
import type { Config } from '../../src/config/types.ts';
import { createGateway } from '../../src/gateway/create-gateway.ts';
import { configProblems } from '../helpers/config.ts';
import { ManualClock } from '../helpers/clock.ts';
import { bearer, get } from '../helpers/gateway.ts';
import { makeKey, signToken, startJwksServer, type JwksServer, type TestKey } from '../helpers/keys.ts';
import { startTestUpstream, type TestUpstream } from '../helpers/upstream.ts';

/** The catalogue an operator declared: staff read every shop's products, the public only the featured shop's. */
const products = {
  path: '/api/shops/{shop}/products/{sku}',
  params: { shop: 'string', sku: 'string' },
  upstream: '/shops/{shop}/products/{sku}',
  fields: ['sku', 'title'],
  rel: 'product',
  collection: { path: '/api/shops/{shop}/products', upstream: '/shops/{shop}/products', items: '/items', total: null, paged: false, cacheItems: true },
  scope: 'catalogue:internal',
  owner: null,
};
const featured = {
  path: '/api/shops/featured/products/{sku}',
  params: { sku: 'string' },
  upstream: '/featured/{sku}',
  fields: ['sku', 'title'],
  rel: 'featured',
  collection: null,
  scope: 'catalogue:public',
  owner: null,
};

describe('templates that can match one path', () => {
  test('a literal segment another template takes as a parameter is refused, naming both templates and their resources', () => {
    assert.deepEqual(configProblems({ resources: { products, featured } }), [
      'resources.featured.path: /api/shops/featured/products/{sku} overlaps resources.products.path (/api/shops/{shop}/products/{sku}): both match /api/shops/featured/products/x, so one path would name two resources; make a literal segment differ, or give the parameter a type the literal does not fit',
    ]);
  });

  test("a parameter where the gateway's own documents are is refused when the document's name fits its type", () => {
    const byId = (type: string) => ({
      resources: { things: { path: '/api/{id}', params: { id: type }, upstream: '/things/{id}', fields: ['id'], collection: null, owner: null } },
    });
    assert.deepEqual(configProblems(byId('string')), [
      "resources.things.path: /api/{id} overlaps the gateway's own /api/openapi.json: both match /api/openapi.json, so one path would name two resources; make a literal segment differ, or give the parameter a type the literal does not fit",
      'resources.things.path: /api/{id} overlaps resources.customers.collection.path (/api/customers): both match /api/customers, so one path would name two resources; make a literal segment differ, or give the parameter a type the literal does not fit',
    ]);
    // An integer never spells "openapi.json" nor "customers": nothing overlaps.
    assert.deepEqual(configProblems(byId('integer')), []);
  });

  test('an item and a collection can overlap too, and two parameters of any types always do', () => {
    const picks = {
      path: '/api/picks/{customerId}/{kind}/{id}',
      params: { customerId: 'integer', kind: 'string', id: 'integer' },
      upstream: '/picks/{customerId}/{kind}/{id}',
      fields: ['id'],
      owner: null,
      collection: { path: '/api/customers/{customerId}/{kind}', upstream: '/picks/{customerId}/{kind}' },
    };
    assert.deepEqual(configProblems({ resources: { picks } }), [
      'resources.picks.collection.path: /api/customers/{customerId}/{kind} overlaps resources.orders.collection.path (/api/customers/{customerId}/orders): both match /api/customers/1/orders, so one path would name two resources; make a literal segment differ, or give the parameter a type the literal does not fit',
    ]);
    const tags = {
      path: '/api/customers/{id}/{tag}',
      params: { id: 'integer', tag: 'string' },
      upstream: '/tags/{id}/{tag}',
      fields: ['tag'],
      owner: null,
      collection: null,
    };
    const tagged = configProblems({ resources: { tags } });
    assert.deepEqual(tagged, [
      'resources.tags.path: /api/customers/{id}/{tag} overlaps resources.orders.collection.path (/api/customers/{customerId}/orders): both match /api/customers/1/orders, so one path would name two resources; make a literal segment differ, or give the parameter a type the literal does not fit',
    ]);
  });

  test('the shipped config passes', () => {
    assert.deepEqual(configProblems({}), []);
  });

  test('--check-config refuses the overlapping catalogue and exits 1, one line naming both', () => {
    const dir = mkdtempSync(join(tmpdir(), 'hypergate-overlap-'));
    after(() => rmSync(dir, { recursive: true, force: true }));
    const file = join(dir, 'catalogue.json');
    writeFileSync(file, JSON.stringify({ resources: { products, featured } }));
    const run = spawnSync(process.execPath, ['--import', 'tsx', resolve(PROJECT_ROOT, 'src/main.ts'), '--check-config', '--config', file], {
      cwd: PROJECT_ROOT,
      encoding: 'utf8',
      timeout: 20_000,
    });
    assert.equal(run.status, 1, run.stdout + run.stderr);
    const lines = (run.stdout + run.stderr).split('\n').filter((l) => l.includes('overlaps'));
    assert.equal(lines.length, 1, run.stdout + run.stderr);
    assert.match(
      lines[0] ?? '',
      /resources\.featured\.path: \/api\/shops\/featured\/products\/\{sku\} overlaps resources\.products\.path \(\/api\/shops\/\{shop\}\/products\/\{sku\}\)/,
    );
  });
});

describe('a collection stores a member only under a path its own item resource answers', () => {
  let upstream: TestUpstream;
  let jwks: JwksServer;
  let key: TestKey;
  const clock = new ManualClock();
  let url: string;
  let close: () => Promise<void>;

  before(async () => {
    upstream = await startTestUpstream();
    key = await makeKey('ES256');
    jwks = await startJwksServer([key.publicJwk]);
    const base = { server: { port: 0, host: '127.0.0.1' }, admin: { port: null }, upstream: { url: upstream.url }, auth: { jwksUrl: jwks.url } };
    // Each declaration is valid alone; together they overlap, which validation now refuses. The
    // table is built from them anyway (as a config that skipped validation would be), so the
    // engine's own rule is what is tested here.
    const alone = (resource: string, declaration: unknown): Config => configWith({ ...base, resources: { [resource]: declaration } });
    const config = {
      ...structuredClone(alone('products', products)),
      resources: { ...alone('products', products).resources, featured: alone('featured', featured).resources['featured'] },
    } as Config;
    const gateway = await createGateway(config, { clock });
    const address = await gateway.listen();
    url = `http://127.0.0.1:${address.port}`;
    close = () => gateway.close(0);
    upstream.on('/shops/featured/products', { kind: 'json', body: { items: [{ sku: 'p1', title: 'Internal cost sheet', shop: 'featured' }] } });
    upstream.on('/shops/featured/products/p1', { kind: 'json', body: { sku: 'p1', title: 'Internal cost sheet', shop: 'featured' } });
    upstream.on('/featured/p1', { kind: 'json', body: { sku: 'p1', title: 'Public teaser' } });
  });
  after(async () => {
    await close();
    await upstream.close();
    await jwks.close();
  });

  test("after staff read the featured shop's list, a public token reads the featured record, never a cached internal one", async () => {
    const staff = await signToken(key, { nowSeconds: clock.seconds, claims: { scope: 'catalogue:internal' } });
    const list = await get(`${url}/api/shops/featured/products`, bearer(staff));
    assert.equal(list.status, 200, list.text);
    const publicToken = await signToken(key, { nowSeconds: clock.seconds, claims: { scope: 'catalogue:public' } });
    const read = await get(`${url}/api/shops/featured/products/p1`, bearer(publicToken));
    assert.equal(read.status, 200, read.text);
    assert.equal((read.json() as { title: string }).title, 'Public teaser');
    assert.equal(upstream.hits('/featured/p1'), 1);
  });
});

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { configProblems, problemsOf } from '../helpers/config.ts';
import { configWith, loadConfig } from '../../src/gateway/load-config.ts';

const dir = mkdtempSync(join(tmpdir(), 'hypergate-messages-'));
after(() => rmSync(dir, { recursive: true, force: true }));

/** A product declaration on the default service, to break one key at a time. */
function products(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return { path: '/api/products/{sku}', params: { sku: 'string' }, upstream: '/v2/products/{sku}', fields: ['sku', 'title'], ...overrides };
}

const withProducts = (overrides: Record<string, unknown>, extra: Record<string, unknown> = {}): string[] =>
  configProblems({ resources: { products: products(overrides) }, ...extra });

describe('config problems say what is wrong and how to fix it', () => {
  test('a link template naming a field that is neither a parameter nor declared names the template and the field', () => {
    assert.deepEqual(withProducts({ links: { maker: '/api/customers/{makerId}' } }), [
      'resources.products.links.maker: /api/customers/{makerId} names {makerId}, which is neither a parameter of resources.products.path nor a declared field; list it in resources.products.linkFields (read for links only) or in exposeFields',
    ]);
    // Declared as a link field (read for links, not copied into the representation), or exposed: it loads.
    assert.deepEqual(withProducts({ links: { maker: '/api/customers/{makerId}' }, linkFields: ['makerId'] }), []);
    assert.deepEqual(withProducts({ links: { maker: '/api/customers/{makerId}' }, exposeFields: ['makerId'] }), []);
  });

  test('a link field no link reads, or one listed as a field too, is a problem', () => {
    assert.deepEqual(withProducts({ linkFields: ['makerId'] }), ['resources.products.linkFields: "makerId" is read by none of resources.products.links']);
    assert.deepEqual(withProducts({ links: { maker: '/api/customers/{title}' }, linkFields: ['title'] }), [
      'resources.products.linkFields: "title" is already in resources.products.fields',
    ]);
  });

  test('a field name with "/" or "." is refused with a hint: a nested value is taken with a pointer entry', () => {
    const hint =
      'a field named by a string is a top-level member of the record, taken literally: for a nested value write {"name": "<public name>", "pointer": "/path/to/it"} (or point resources.products.record at the object that holds the fields)';
    assert.deepEqual(withProducts({ fields: ['sku', 'price.amount'] }), [`resources.products.fields: "price.amount" has a "." or "/"; ${hint}`]);
    assert.deepEqual(withProducts({ exposeFields: ['meta/colour'] }), [`resources.products.exposeFields: "meta/colour" has a "." or "/"; ${hint}`]);
    assert.deepEqual(withProducts({ links: { maker: '/api/customers/{makerId}' }, linkFields: ['makerId', 'a.b'] }), [
      `resources.products.linkFields: "a.b" has a "." or "/"; ${hint}`,
    ]);
  });

  test('a URL whose port is out of range says so', () => {
    assert.deepEqual(configProblems({ upstream: { url: 'http://127.0.0.1:99999' } }), [
      'upstream.url: the port 99999 is out of range (1 to 65535), got "http://127.0.0.1:99999"',
    ]);
    assert.deepEqual(configProblems({ upstream: { url: 'http://127.0.0.1:0/api' } }), [
      'upstream.url: the port 0 is out of range (1 to 65535), got "http://127.0.0.1:0/api"',
    ]);
    assert.deepEqual(configProblems({ upstreams: { catalogue: { url: 'https://catalogue.internal:70000' } } }), [
      'upstreams.catalogue.url: the port 70000 is out of range (1 to 65535), got "https://catalogue.internal:70000"',
    ]);
  });

  test('a JSON syntax error in the config file names its line and column', () => {
    const file = join(dir, 'broken.json');
    writeFileSync(file, '{\n  "server": {\n    "port": 8080,\n  }\n}\n');
    const [problem] = problemsOf(() => loadConfig({ file }));
    assert.match(problem ?? '', new RegExp(`^--config ${file.replace(/[./]/g, '\\$&')}: not valid JSON at line 4, column 3: `));
    writeFileSync(file, '{"server": {"port": 8080}');
    assert.match(problemsOf(() => loadConfig({ file }))[0] ?? '', /: not valid JSON at line 1, column 26: /);
  });

  test('an unknown service gets a "did you mean"', () => {
    const problems = withProducts({ service: 'catalog' }, { upstreams: { catalogue: { url: 'http://127.0.0.1:9' } } });
    assert.deepEqual(problems, [
      'resources.products.service: "catalog" is not a declared service ("upstream" or a key of upstreams) (did you mean "catalogue"?)',
    ]);
    assert.doesNotThrow(() =>
      configWith({ resources: { products: products({ service: 'catalogue' }) }, upstreams: { catalogue: { url: 'http://127.0.0.1:9' } } }),
    );
  });
});

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { RouteTemplate } from '../../src/passthrough/route-template.ts';
import { configWith } from '../../src/gateway/load-config.ts';
import { configProblems } from '../helpers/config.ts';

/** A valid route to break one key at a time. */
function files(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return { path: '/api/files/{path*}', service: 'storage', upstream: '/files/{path*}', ...overrides };
}

const services = { upstreams: { storage: { url: 'http://127.0.0.1:9/' } } };
const problemsWith = (route: Record<string, unknown>, extra: Record<string, unknown> = {}): string[] =>
  configProblems({ ...services, routes: { files: route }, ...extra });

describe('routes.<name> in config', () => {
  test('a valid route loads, with left-out keys filled in; none is declared by default', () => {
    assert.deepEqual(configWith({}).routes, {});
    const route = configWith({ ...services, routes: { files: files() } }).routes['files'];
    assert.deepEqual(route?.methods, ['GET']);
    assert.equal(route?.scope, null);
    assert.equal(route?.public, false);
    assert.equal(route?.timeoutMs, null);
    assert.equal(route?.idleTimeoutMs, 60_000);
    assert.equal(route?.maxBodyBytes, null);
    assert.equal(route?.websocket, false);
  });

  test('an unknown service is named with a hint', () => {
    assert.deepEqual(problemsWith(files({ service: 'storag' })), [
      'routes.files.service: "storag" is not a declared service ("upstream" or a key of upstreams) (did you mean "storage"?)',
    ]);
  });

  test('a path that overlaps a resource, the API root or the OpenAPI document is refused, naming both', () => {
    assert.deepEqual(problemsWith(files({ path: '/api/customers/{id}', upstream: '/avatars/{id}' })), [
      'routes.files.path: /api/customers/{id} overlaps resources.customers.path (/api/customers/{id}): the same paths would match both; pick a path no resource answers',
    ]);
    assert.match(problemsWith(files({ path: '/api/{rest*}' })).join('\n'), /overlaps the gateway's own \/api\/openapi\.json/);
    assert.match(problemsWith(files({ path: '/{p}' })).join('\n'), /overlaps the gateway's own \/api:/);
    assert.deepEqual(problemsWith(files({ path: '/api/customers/{id}/avatar', upstream: '/avatars/{id}' })), []);
  });

  test('two routes that match the same requests for one method are refused; other methods may share a path', () => {
    const twice = configProblems({ ...services, routes: { files: files(), more: files({ path: '/api/files/{a}/{b}', upstream: '/files/{a}/{b}' }) } });
    assert.deepEqual(twice, [
      'routes.more.path: /api/files/{a}/{b} overlaps routes.files (/api/files/{path*}) for GET, HEAD: the same requests would match both',
    ]);
    assert.deepEqual(configProblems({ ...services, routes: { files: files(), upload: files({ methods: ['POST'] }) } }), []);
  });

  test('an upstream template naming a parameter the path lacks, or spelling the rest parameter otherwise, is refused', () => {
    assert.deepEqual(problemsWith(files({ upstream: '/files/{name}' })), [
      'routes.files.upstream: {name} is not a parameter of routes.files.path (/api/files/{path*})',
    ]);
    assert.match(problemsWith(files({ upstream: '/files/{path}' })).join('\n'), /write \{path\*\} as routes\.files\.path does/);
  });

  test('templates are checked: a rest parameter last only, whole segments, no query', () => {
    assert.match(
      problemsWith(files({ path: '/api/files/{path*}/raw' })).join('\n'),
      /routes\.files\.path: \{path\*\} takes the rest of the path, so it must be the last segment/,
    );
    assert.match(problemsWith(files({ path: '/api/files/x{id}' })).join('\n'), /routes\.files\.path: "x\{id\}": a parameter is a whole segment/);
    assert.match(problemsWith(files({ upstream: '/files/{path*}?a=b' })).join('\n'), /routes\.files\.upstream: a path template has no query/);
  });

  test('methods come from a fixed set; public needs a read and websocket a GET', () => {
    assert.match(
      problemsWith(files({ methods: ['GET', 'TRACE'] })).join('\n'),
      /routes\.files\.methods: "TRACE" is not one of GET, HEAD, POST, PUT, PATCH, DELETE/,
    );
    assert.deepEqual(problemsWith(files({ methods: ['POST'], public: true })), [
      'routes.files.public: lets only GET and HEAD through without credentials, and routes.files.methods has neither',
    ]);
    assert.deepEqual(problemsWith(files({ methods: ['POST'], websocket: true })), [
      'routes.files.websocket: a WebSocket upgrade is a GET; add "GET" to routes.files.methods',
    ]);
  });

  test('an unknown key is named with a hint', () => {
    assert.deepEqual(problemsWith(files({ timeoutMillis: 5 })), ['routes.files.timeoutMillis: unknown key (did you mean "timeoutMs"?)']);
  });
});

describe('a route template', () => {
  const t = RouteTemplate.parse('/api/files/{dir}/{path*}');

  test('matches its parameters as written, the rest parameter one segment or more', () => {
    assert.deepEqual(
      t.match('/api/files/a/b'),
      new Map([
        ['dir', 'a'],
        ['path', 'b'],
      ]),
    );
    assert.deepEqual(
      t.match('/api/files/a/b/c%20d.txt'),
      new Map([
        ['dir', 'a'],
        ['path', 'b/c%20d.txt'],
      ]),
    );
    assert.equal(t.match('/api/files/a'), null);
    assert.equal(t.match('/api/files/a/'), null);
    assert.equal(
      t.build(
        new Map([
          ['dir', 'x'],
          ['path', 'y/z'],
        ]),
      ),
      '/api/files/x/y/z',
    );
  });

  test('refuses segments an upstream could read as another path', () => {
    for (const path of [
      '/api/files/../b',
      '/api/files/a/..',
      '/api/files/a/.%2E',
      '/api/files/a/%2e',
      '/api/files/a/b%2fc',
      '/api/files/a/b%5Cc',
      '/api/files/a/b%00',
      '/api/files/a/b//c',
      '/api/files/a/b%G1',
    ]) {
      assert.equal(t.match(path), null, path);
    }
    assert.notEqual(t.match('/api/files/a/...'), null, 'three dots are a name');
  });

  test('says its router pattern and OpenAPI path', () => {
    assert.equal(t.route, '/api/files/:dir/*');
    assert.equal(t.openApiPath, '/api/files/{dir}/{path}');
  });
});

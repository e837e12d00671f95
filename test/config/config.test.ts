import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { readDefaults } from '../../src/config/load.ts';
import { problemsOf, SOME_UPSTREAM as UPSTREAM } from '../helpers/config.ts';
import { configWith, loadConfig } from '../../src/gateway/load-config.ts';

const dir = mkdtempSync(join(tmpdir(), 'hypergate-config-'));
// Removed once every test of the file has run.
after(() => rmSync(dir, { recursive: true, force: true }));

function writeConfig(name: string, value: unknown): string {
  const file = join(dir, name);
  writeFileSync(file, typeof value === 'string' ? value : JSON.stringify(value));
  return file;
}

describe('configuration', () => {
  test('the embedded defaults are valid and frozen', () => {
    const config = loadConfig();
    assert.equal(config.server.port, 8080);
    assert.equal(config.cache.maxAgeSeconds, 60);
    assert.equal(config.cache.maxEntries, 100000);
    assert.equal(config.upstream.timeoutMs, 2000);
    assert.equal(config.auth.requiredScope, 'customers:read');
    assert.equal(config.auth.clockToleranceSeconds, 5);
    assert.ok(Object.isFrozen(config) && Object.isFrozen(config.auth) && Object.isFrozen(config.resources['customers']?.exposeFields));
  });

  test('a file is loaded over the defaults, keeping what it does not mention', () => {
    const config = loadConfig({ file: writeConfig('partial.json', { server: { port: 9000 }, cache: { maxAgeSeconds: 30 } }) });
    assert.equal(config.server.port, 9000);
    assert.equal(config.server.host, '127.0.0.1');
    assert.equal(config.cache.maxAgeSeconds, 30);
    assert.equal(config.cache.maxEntries, 100000);
  });

  test('every key named in the contract is accepted', () => {
    const config = configWith({
      server: { host: '0.0.0.0', port: 1 },
      upstream: { url: 'http://upstream.internal:8081', timeoutMs: 100 },
      auth: { jwksUrl: 'https://idp.example/jwks', algorithms: ['ES256'], issuer: 'i', audience: 'a', clockToleranceSeconds: 0, requiredScope: 's' },
      cache: { maxAgeSeconds: 1, maxEntries: 1 },
    });
    assert.equal(config.upstream.url, 'http://upstream.internal:8081');
  });

  test('unknown keys are refused with a hint', () => {
    const problems = problemsOf(() => configWith({ server: { prot: 1 }, cache: { maxage: 5 }, extra: true }));
    assert.ok(problems.includes('server.prot: unknown key (did you mean "port"?)'), problems.join('\n'));
    assert.ok(problems.includes('cache.maxage: unknown key (did you mean "maxAgeSeconds"?)'), problems.join('\n'));
    assert.ok(problems.includes('extra: unknown key'), problems.join('\n'));
  });

  test('an unknown key gets a hint whatever its case, separators or spelled-out unit', () => {
    const problems = problemsOf(() => configWith({ server: { drainTimeoutMillis: 1 }, auth: { JWKS_URL: 'x' }, sever: {} }));
    assert.ok(problems.includes('server.drainTimeoutMillis: unknown key (did you mean "drainTimeoutMs"?)'), problems.join('\n'));
    assert.ok(problems.includes('auth.JWKS_URL: unknown key (did you mean "jwksUrl"?)'), problems.join('\n'));
    assert.ok(problems.includes('sever: unknown key (did you mean "server"?)'), problems.join('\n'));
  });

  test('wrong types are refused, one line per problem naming the key path', () => {
    const problems = problemsOf(() =>
      configWith({
        server: { port: '8080' },
        upstream: { url: 'ftp://x', timeoutMs: -1 },
        auth: { issuer: '', algorithms: ['none'] },
        cache: { maxEntries: 1.5 },
      }),
    );
    assert.deepEqual([...problems].sort(), [
      'auth.algorithms: "none" is not one of HS256, HS384, HS512, RS256, RS384, RS512, PS256, PS384, PS512, ES256, ES384, ES512, EdDSA, Ed25519',
      'auth.issuer: expected a non-empty string or null, got ""',
      'cache.maxEntries: expected an integer from 1 to 10000000, got 1.5',
      'server.port: expected an integer from 0 to 65535, got "8080"',
      'upstream.timeoutMs: expected an integer from 1 to 86400000, got -1',
      'upstream.url: expected an http(s) URL without credentials, query or fragment, or null, got "ftp://x"',
    ]);
  });

  test('two key sources at once are refused', () => {
    const problems = problemsOf(() => configWith({ upstream: UPSTREAM, auth: { jwksUrl: 'https://idp.example/jwks', jwksFile: '/etc/jwks.json' } }));
    assert.deepEqual(problems, ['auth: set only one key source, got auth.jwksUrl and auth.jwksFile']);
  });

  test('auth.secret needs an HS algorithm listed, and HS algorithms need a secret', () => {
    assert.deepEqual(
      problemsOf(() => configWith({ upstream: UPSTREAM, auth: { secret: 'x'.repeat(40) } })),
      ['auth.secret: requires auth.algorithms to list HS256, HS384 or HS512'],
    );
    assert.deepEqual(
      problemsOf(() => configWith({ auth: { algorithms: ['HS256'] } })),
      ['auth.algorithms: HS256 needs auth.secret; public keys never verify HMAC tokens'],
    );
    assert.ok(
      problemsOf(() => configWith({ upstream: UPSTREAM, auth: { secret: 'short', algorithms: ['HS256'] } })).includes(
        'auth.secret: expected at least 32 bytes (RFC 7518 section 3.2)',
      ),
    );
    assert.ok(
      problemsOf(() => configWith({ upstream: UPSTREAM, auth: { secret: 'x'.repeat(40), algorithms: ['HS256', 'ES256'] } })).includes(
        'auth.algorithms: with auth.secret only HS256, HS384 and HS512 are allowed',
      ),
    );
  });

  test('exposing a reserved field is refused', () => {
    assert.deepEqual(
      problemsOf(() => configWith({ resources: { customers: { exposeFields: ['links'] } } })),
      ['resources.customers.exposeFields: "links" is always part of the representation or reserved'],
    );
  });

  test('relative key file paths resolve against the config file folder, not the cwd', () => {
    const sub = join(dir, 'etc');
    mkdirSync(sub, { recursive: true });
    const config = loadConfig({ file: writeConfig('etc/gateway.json', { upstream: UPSTREAM, auth: { jwksFile: 'keys/jwks.json' } }) });
    assert.equal(config.auth.jwksFile, join(sub, 'keys/jwks.json'));
  });

  test('HYPERGATE_PORT and HYPERGATE_UPSTREAM_URL override their keys, over the file', () => {
    const file = writeConfig('ports.json', { server: { port: 9000 } });
    const config = loadConfig({ file, env: { HYPERGATE_PORT: '9100', HYPERGATE_UPSTREAM_URL: 'http://127.0.0.1:7000' } });
    assert.equal(config.server.port, 9100);
    assert.equal(config.upstream.url, 'http://127.0.0.1:7000');
  });

  test('a bad environment override is refused naming the variable', () => {
    assert.deepEqual(
      problemsOf(() => loadConfig({ env: { HYPERGATE_PORT: 'eighty' } })),
      ['HYPERGATE_PORT (server.port): expected an integer from 0 to 65535, got "eighty"'],
    );
    assert.ok(problemsOf(() => loadConfig({ env: { HYPERGATE_UPSTREAM_URL: 'not a url' } }))[0]?.startsWith('HYPERGATE_UPSTREAM_URL (upstream.url):'));
  });

  test('an unreadable or malformed file is one clear problem', () => {
    assert.match(problemsOf(() => loadConfig({ file: join(dir, 'nope.json') }))[0] ?? '', /cannot read the file \(ENOENT\)/);
    assert.match(problemsOf(() => loadConfig({ file: writeConfig('bad.json', '{ "server": ') }))[0] ?? '', /not valid JSON/);
    const notObjects: [string, string][] = [
      ['null', 'null'],
      ['[]', 'an array'],
      ['42', '42'],
      ['"x"', '"x"'],
    ];
    for (const [text, got] of notObjects) {
      const problem = problemsOf(() => loadConfig({ file: writeConfig('not-an-object.json', text) }))[0] ?? '';
      assert.ok(problem.includes('not-an-object.json: expected a JSON object of sections') && problem.endsWith(`, got ${got}`), problem);
    }
  });

  test('config/default.json lists every key of the schema', () => {
    const defaults = readDefaults();
    assert.doesNotThrow(() => configWith(defaults));
    for (const section of ['server', 'upstream', 'auth', 'cache', 'resources', 'sampleUpstream', 'log']) assert.ok(section in defaults, section);
  });
});

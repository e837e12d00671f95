import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ENV_KEYS } from '../../src/config/env.ts';
import { readDefaults } from '../../src/config/load.ts';
import { problemsOf } from '../helpers/config.ts';
import { loadConfig } from '../../src/gateway/load-config.ts';

describe('environment overrides HYPERGATE_<SECTION>_<KEY>', () => {
  it('override integers, strings, booleans and nullable keys of any section', () => {
    const config = loadConfig({
      env: {
        HYPERGATE_SERVER_DRAIN_TIMEOUT_MS: '2500',
        HYPERGATE_LOG_LEVEL: 'warn',
        HYPERGATE_LOG_ACCESS: 'false',
        HYPERGATE_ADMIN_PORT: 'null',
        HYPERGATE_SAMPLE_UPSTREAM_CUSTOMERS: '50',
        HYPERGATE_AUTH_ISSUER: 'https://issuer.example',
        HYPERGATE_SERVER_WORKERS: 'auto',
      },
    });
    assert.equal(config.server.drainTimeoutMs, 2500);
    assert.equal(config.log.level, 'warn');
    assert.equal(config.log.access, false);
    assert.equal(config.admin.port, null);
    assert.equal(config.sampleUpstream.customers, 50);
    assert.equal(config.auth.issuer, 'https://issuer.example');
    assert.equal(config.server.workers, 'auto');
  });

  it('keep HYPERGATE_PORT, HYPERGATE_HOST and HYPERGATE_UPSTREAM_URL working', () => {
    const config = loadConfig({ env: { HYPERGATE_PORT: '9000', HYPERGATE_HOST: '0.0.0.0', HYPERGATE_UPSTREAM_URL: 'http://upstream.example:8081' } });
    assert.equal(config.server.port, 9000);
    assert.equal(config.server.host, '0.0.0.0');
    assert.equal(config.upstream.url, 'http://upstream.example:8081');
  });

  it('let the long name win over the short alias', () => {
    assert.equal(loadConfig({ env: { HYPERGATE_PORT: '9000', HYPERGATE_SERVER_PORT: '9001' } }).server.port, 9001);
  });

  it('name the variable and its key in every problem with a value from the environment, as a file value would be described', () => {
    assert.deepEqual(
      problemsOf(() => loadConfig({ env: { HYPERGATE_SERVER_PORT: 'eighty' } })),
      ['HYPERGATE_SERVER_PORT (server.port): expected an integer from 0 to 65535, got "eighty"'],
    );
    assert.deepEqual(
      problemsOf(() => loadConfig({ env: { HYPERGATE_LOG_ACCESS: 'yes' } })),
      ['HYPERGATE_LOG_ACCESS (log.access): expected true or false, got "yes"'],
    );
    assert.deepEqual(
      problemsOf(() => loadConfig({ env: { HYPERGATE_SERVER_PORT: '70000' } })),
      ['HYPERGATE_SERVER_PORT (server.port): expected an integer from 0 to 65535, got 70000'],
    );
    assert.deepEqual(
      problemsOf(() => loadConfig({ env: { HYPERGATE_SERVER_HEADERS_TIMEOUT_MS: '60000' } })),
      ['HYPERGATE_SERVER_HEADERS_TIMEOUT_MS (server.headersTimeoutMs): must not exceed server.requestTimeoutMs (30000), got 60000'],
    );
  });

  it('refuse an unknown HYPERGATE_ variable instead of ignoring a typo', () => {
    assert.match(problemsOf(() => loadConfig({ env: { HYPERGATE_SERVER_PROT: '1' } }))[0] ?? '', /^HYPERGATE_SERVER_PROT: not a configuration variable/);
  });

  it('hint at the variable a typo meant, by the same rule as unknown keys in a file', () => {
    const hint = (name: string): string => problemsOf(() => loadConfig({ env: { [name]: '1' } }))[0] ?? '';
    assert.equal(hint('HYPERGATE_SERVER_PROT'), 'HYPERGATE_SERVER_PROT: not a configuration variable (did you mean "HYPERGATE_SERVER_PORT"?)');
    // A missing section, a missing unit, run-together words: each is a name the file would hint at too.
    assert.match(hint('HYPERGATE_DRAIN_TIMEOUT_MS'), /did you mean "HYPERGATE_SERVER_DRAIN_TIMEOUT_MS"\?/);
    assert.match(hint('HYPERGATE_UPSTREAM_TIMEOUT'), /did you mean "HYPERGATE_UPSTREAM_TIMEOUT_MS"\?/);
    assert.match(hint('HYPERGATE_AUTH_JWKSURL'), /did you mean "HYPERGATE_AUTH_JWKS_URL"\?/);
    assert.match(hint('HYPERGATE_NOTHING_LIKE_IT'), /not a configuration variable \(scalar keys are HYPERGATE_<SECTION>_<KEY>/);
    assert.equal(hint('HYPERGATE_CORS_ORIGINS'), 'HYPERGATE_CORS_ORIGINS: cors.origins is a list; lists are set in a config file (--config)');
  });

  it('exist for every scalar key of config/default.json', () => {
    const defaults = readDefaults();
    const walk = (tree: Record<string, unknown>, path: string[]): string[] =>
      Object.entries(tree).flatMap(([k, v]) =>
        typeof v === 'object' && v !== null && !Array.isArray(v)
          ? walk(v as Record<string, unknown>, [...path, k])
          : Array.isArray(v)
            ? []
            : [[...path, k].join('.')],
      );
    // auth.algorithms, redis.sentinels and redis.cluster default to null but are lists: lists stay in files.
    // Resources are named by the operator (a map): their keys stay in files too.
    const scalarKeys = walk(defaults, [])
      .filter((k) => !['auth.algorithms', 'redis.sentinels', 'redis.cluster'].includes(k) && !k.startsWith('resources.'))
      .sort();
    const envKeys = [...ENV_KEYS.values()].map((k) => k.path.join('.')).sort();
    assert.deepEqual(envKeys, scalarKeys);
    assert.ok(ENV_KEYS.has('HYPERGATE_SERVER_DRAIN_TIMEOUT_MS'));
  });
});

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { redactedConfig } from '../../src/admin/redacted-config.ts';
import { configWith } from '../../src/gateway/load-config.ts';
import { configProblems } from '../helpers/config.ts';

const SENTINELS = [
  { host: '10.0.0.5', port: 26379 },
  { host: '10.0.0.6', port: 26379 },
];

describe('how Redis is reached: redis.url, redis.sentinels or redis.cluster', () => {
  it('takes a Sentinel set with the master name, and a Redis Cluster by its seed nodes', () => {
    assert.deepEqual(configProblems({ redis: { sentinels: SENTINELS, name: 'main', sentinelPassword: { env: 'SENTINEL_PASSWORD' } } }), []);
    assert.deepEqual(configProblems({ redis: { cluster: ['redis://10.0.0.5:6379', 'redis://10.0.0.6:6379'] } }), []);
    assert.deepEqual(configProblems({ redis: { sentinels: SENTINELS, name: 'main' }, rateLimit: { scope: 'cluster' }, cache: { shared: true } }), []);
  });

  it('refuses more than one way at a time, naming the keys', () => {
    assert.deepEqual(configProblems({ redis: { url: 'redis://127.0.0.1:6379', cluster: ['redis://10.0.0.5:6379'] } }), [
      'redis.cluster: set only one of redis.url and redis.cluster (they are different ways to reach Redis)',
    ]);
    assert.deepEqual(configProblems({ redis: { url: 'redis://127.0.0.1:6379', sentinels: SENTINELS, name: 'main' } }), [
      'redis.sentinels: set only one of redis.url and redis.sentinels (they are different ways to reach Redis)',
    ]);
  });

  it("needs the master's name with Sentinels, and the Sentinel keys only with them", () => {
    assert.deepEqual(configProblems({ redis: { sentinels: SENTINELS } }), ["redis.name: required with redis.sentinels (the master's name the Sentinels know)"]);
    assert.deepEqual(configProblems({ redis: { url: 'redis://127.0.0.1:6379', name: 'main', password: 'x' } }), [
      'redis.name: only used with redis.sentinels',
      'redis.password: only used with redis.sentinels',
    ]);
  });

  it('checks each Sentinel and seed node', () => {
    assert.deepEqual(configProblems({ redis: { sentinels: [{ host: '10.0.0.5' }], name: 'main' } }), [
      'redis.sentinels[0].port: expected an integer from 1 to 65535, got undefined',
    ]);
    assert.deepEqual(configProblems({ redis: { sentinels: [], name: 'main' } }), ['redis.sentinels: expected at least one entry']);
    assert.deepEqual(configProblems({ redis: { cluster: ['http://10.0.0.5:6379'] } }), [
      'redis.cluster: expected redis:// or rediss:// URLs of seed nodes (host and port)',
    ]);
  });

  it('never shows the Sentinel or master password, nor a seed node credential, in /config', () => {
    const config = configWith({ redis: { sentinels: SENTINELS, name: 'main', sentinelPassword: 'secret-1', password: 'secret-2' } });
    const shown = JSON.stringify(redactedConfig(config));
    assert.ok(!shown.includes('secret-1') && !shown.includes('secret-2'), shown);
    const cluster = configWith({ redis: { cluster: ['redis://:secret-3@10.0.0.5:6379'] } });
    assert.ok(!JSON.stringify(redactedConfig(cluster)).includes('secret-3'));
  });
});

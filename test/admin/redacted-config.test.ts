import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { redactedConfig } from '../../src/admin/redacted-config.ts';
import { configWith } from '../../src/gateway/load-config.ts';
import { SOME_UPSTREAM } from '../helpers/config.ts';

const PASSWORD = 'pw-Lq7Zt3';

function redisUrlShown(url: string): unknown {
  const shown = redactedConfig(configWith({ redis: { url } })) as { redis: { url: string } };
  return shown.redis.url;
}

describe('the config as the admin API shows it', () => {
  it('hides the user and the password of a Redis URL, whichever of them it has, and keeps the rest', () => {
    assert.equal(redisUrlShown(`redis://cache-user:${PASSWORD}@redis.internal:6379/0`), 'redis://[redacted]@redis.internal:6379/0');
    assert.equal(redisUrlShown(`rediss://:${PASSWORD}@redis.internal:6380`), 'rediss://[redacted]@redis.internal:6380');
    assert.equal(redisUrlShown('redis://redis.internal:6379'), 'redis://redis.internal:6379');
  });

  it('hides auth.secret and every upstream header value, literal or read from the environment', () => {
    const config = configWith({
      auth: { secret: `${PASSWORD}-at-least-thirty-two-bytes-long`, algorithms: ['HS256'] },
      upstream: { url: SOME_UPSTREAM.url, headers: { 'X-Api-Key': PASSWORD, 'X-From-Env': { env: 'HOME' } } },
    });
    const shown = redactedConfig(config) as { auth: { secret: string }; upstream: { headers: Record<string, string> } };
    assert.equal(shown.auth.secret, '[redacted]');
    assert.deepEqual(shown.upstream.headers, { 'X-Api-Key': '[redacted]', 'X-From-Env': '[redacted]' });
    assert.equal(JSON.stringify(shown).includes(PASSWORD), false);
  });
});

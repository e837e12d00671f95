import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { SignJWT } from 'jose';
import { mintDevToken } from '../../src/auth/mint.ts';
import { mergeConfig } from '../../src/config/load.ts';
import { configWith } from '../../src/gateway/load-config.ts';
import { bearer, get, startGateway, type RunningGateway } from '../helpers/gateway.ts';
import { makeKey, signToken } from '../helpers/keys.ts';
import { sample } from '../helpers/metrics.ts';
import { startTestUpstream, type TestUpstream } from '../helpers/upstream.ts';

const dir = mkdtempSync(join(tmpdir(), 'hypergate-reload-tokens-'));
after(() => rmSync(dir, { recursive: true, force: true }));

const SECRET = 'a-shared-secret-of-at-least-32-bytes!';

const verifications = async (gw: RunningGateway): Promise<number> =>
  sample(await gw.gateway.metrics.text(), 'hypergate_token_verifications_total', { result: 'ok' }) ?? Number.NaN;

const reload = (gw: RunningGateway, overrides: unknown) => gw.gateway.reload(configWith(mergeConfig(gw.gateway.config, overrides)));

/** One gateway per key source, and a token it accepts. */
interface World {
  readonly auth: Record<string, unknown>;
  token(gw: RunningGateway): Promise<string>;
}

async function worlds(): Promise<Record<string, World>> {
  const key = await makeKey('ES256');
  const pem = join(dir, 'public.pem');
  writeFileSync(pem, await key.publicPem());
  const jwks = join(dir, 'jwks.json');
  writeFileSync(jwks, JSON.stringify({ keys: [key.publicJwk] }));
  const signed = async (): Promise<string> => signToken(key);
  return {
    'a public key file': { auth: { publicKeyFile: pem }, token: signed },
    'a JWKS file': { auth: { jwksFile: jwks }, token: signed },
    'a shared secret': {
      auth: { secret: SECRET, algorithms: ['HS256'] },
      token: () =>
        new SignJWT({ scope: 'customers:read', sub: 'hmac' })
          .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
          .setExpirationTime('1h')
          .sign(new TextEncoder().encode(SECRET)),
    },
    'dev keys': {
      auth: { devKeyDir: join(dir, 'dev-keys') },
      token: async (gw) => mintDevToken(gw.gateway.keySource.devKeys ?? assert.fail('no dev keys'), { sub: 'dev', scope: 'customers:read', ttlSeconds: 3600 }),
    },
  };
}

describe('a reload that changes no auth.* key keeps the verified tokens', () => {
  let upstream: TestUpstream;

  test('for every key source, not only a JWKS URL', async (t) => {
    upstream = await startTestUpstream();
    t.after(() => upstream.close());
    for (const [name, world] of Object.entries(await worlds())) {
      const gw = await startGateway({ upstream: { url: upstream.url }, auth: world.auth });
      try {
        const token = await world.token(gw);
        assert.equal((await get(`${gw.url}/api/customers/1`, bearer(token))).status, 200, name);
        const verifier = gw.gateway.verifier;
        const before = await verifications(gw);
        const result = await reload(gw, { log: { level: 'warn' }, cache: { maxAgeSeconds: 30 } });
        assert.deepEqual(result.changed, ['cache.maxAgeSeconds', 'log.level'], name);
        assert.equal(gw.gateway.verifier, verifier, `${name}: the same verifier, with its cache`);
        assert.equal((await get(`${gw.url}/api/customers/1`, bearer(token))).status, 200, name);
        assert.equal(await verifications(gw), before, `${name}: the token was not verified again`);
        // A change to auth.* verifies tokens again under the new settings.
        await reload(gw, { auth: { clockToleranceSeconds: 1 } });
        assert.notEqual(gw.gateway.verifier, verifier, name);
        assert.equal(gw.gateway.verifier.cached(token), undefined, name);
      } finally {
        await gw.close();
      }
    }
  });

  test('but not the keys of a key file that changed on disk: a token of the withdrawn key stops working', async (t) => {
    upstream = await startTestUpstream();
    t.after(() => upstream.close());
    const old = await makeKey('ES256');
    const rotated = await makeKey('ES256');
    const pem = join(dir, 'rotating.pem');
    writeFileSync(pem, await old.publicPem());
    const gw = await startGateway({ upstream: { url: upstream.url }, auth: { publicKeyFile: pem } });
    try {
      const oldToken = await signToken(old);
      assert.equal((await get(`${gw.url}/api/customers/1`, bearer(oldToken))).status, 200);
      writeFileSync(pem, await rotated.publicPem());
      await reload(gw, { log: { level: 'warn' } });
      assert.equal((await get(`${gw.url}/api/customers/1`, bearer(oldToken))).status, 401);
      assert.equal((await get(`${gw.url}/api/customers/1`, bearer(await signToken(rotated)))).status, 200);
    } finally {
      await gw.close();
    }
  });
});

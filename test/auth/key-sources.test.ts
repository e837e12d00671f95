import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { SignJWT } from 'jose';
import { loadOrCreateDevKeys } from '../../src/auth/dev-keys.ts';
import { KeySourceError } from '../../src/auth/keys.ts';
import { mintDevToken } from '../../src/auth/mint.ts';
import { createGateway } from '../../src/gateway/create-gateway.ts';
import { bearer, get, startGateway, type RunningGateway } from '../helpers/gateway.ts';
import { makeKey, signToken, startJwksServer } from '../helpers/keys.ts';
import { startTestUpstream, type TestUpstream } from '../helpers/upstream.ts';
import { configWith } from '../../src/gateway/load-config.ts';
import { SOME_UPSTREAM } from '../helpers/config.ts';

const dir = mkdtempSync(join(tmpdir(), 'hypergate-keys-'));
// Removed once every test of the file has run.
after(() => rmSync(dir, { recursive: true, force: true }));
const running: Array<{ close(): Promise<void> }> = [];
after(async () => {
  for (const r of running.reverse()) await r.close();
});

async function upstream(): Promise<TestUpstream> {
  const u = await startTestUpstream();
  running.push(u);
  return u;
}

async function gateway(auth: Record<string, unknown>): Promise<RunningGateway> {
  const u = await upstream();
  const gw = await startGateway({ upstream: { url: u.url }, auth });
  running.push(gw);
  return gw;
}

describe('key sources', () => {
  test('auth.jwksFile verifies tokens signed by a key in the file', async () => {
    const key = await makeKey('RS256');
    const file = join(dir, 'jwks.json');
    writeFileSync(file, JSON.stringify({ keys: [key.publicJwk] }));
    const gw = await gateway({ jwksFile: file });
    assert.equal(gw.gateway.keySource.mode, 'jwks-file');
    assert.equal((await get(`${gw.url}/api/customers/1`, bearer(await signToken(key)))).status, 200);
  });

  test('auth.publicKeyFile (PEM) verifies tokens and defaults the algorithms to the key type', async () => {
    const key = await makeKey('EdDSA');
    const file = join(dir, 'ed25519.pem');
    writeFileSync(file, await key.publicPem());
    const gw = await gateway({ publicKeyFile: file });
    assert.deepEqual(gw.gateway.keySource.algorithms, ['EdDSA', 'Ed25519']);
    assert.equal((await get(`${gw.url}/api/customers/1`, bearer(await signToken(key)))).status, 200);
  });

  test('auth.publicKeyFile with an EC key refuses an RSA-only algorithm list at start-up', async () => {
    const key = await makeKey('ES256');
    const file = join(dir, 'ec.pem');
    writeFileSync(file, await key.publicPem());
    const servers = (): number => process.getActiveResourcesInfo().filter((r) => r === 'TCPServerWrap').length;
    const before = servers();
    await assert.rejects(
      createGateway(configWith({ upstream: SOME_UPSTREAM, auth: { publicKeyFile: file, algorithms: ['RS256'] } })),
      (err: Error) => err instanceof KeySourceError && /auth\.algorithms/.test(err.message),
    );
    // Regression: the embedded sample upstream, started first, stayed listening after the failed build.
    // A closed listener's handle is released a few loop turns later: wait for it, bounded.
    for (let waited = 0; servers() > before && waited < 2000; waited += 10) await new Promise((done) => setTimeout(done, 10));
    assert.equal(servers(), before, 'no listener left behind');
  });

  test('a private key given as auth.publicKeyFile is refused at start-up', async () => {
    const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const file = join(dir, 'private.pem');
    writeFileSync(file, privateKey.export({ type: 'pkcs8', format: 'pem' }));
    await assert.rejects(createGateway(configWith({ upstream: SOME_UPSTREAM, auth: { publicKeyFile: file } })), /holds a private key/);
  });

  test('an unreadable key file is a clear start-up error naming the key', async () => {
    await assert.rejects(
      createGateway(configWith({ upstream: SOME_UPSTREAM, auth: { jwksFile: join(dir, 'missing.json') } })),
      /auth\.jwksFile: cannot read .*ENOENT/,
    );
  });

  test('auth.secret verifies HS256 tokens when auth.algorithms lists HS256', async () => {
    const secret = 'a-shared-secret-of-at-least-32-bytes!!';
    const gw = await gateway({ secret, algorithms: ['HS256'] });
    const token = await new SignJWT({ scope: 'customers:read' })
      .setProtectedHeader({ alg: 'HS256' })
      .setExpirationTime('1h')
      .sign(new TextEncoder().encode(secret));
    assert.equal((await get(`${gw.url}/api/customers/1`, bearer(token))).status, 200);
    const forged = await new SignJWT({ scope: 'customers:read' })
      .setProtectedHeader({ alg: 'HS256' })
      .setExpirationTime('1h')
      .sign(new TextEncoder().encode(`${secret}x`));
    assert.equal((await get(`${gw.url}/api/customers/1`, bearer(forged))).status, 401);
  });

  test('auth.jwksUrl refetches on an unknown kid, but at most once per cooldown', async () => {
    const first = await makeKey('ES256', 'k1');
    const jwks = await startJwksServer([first.publicJwk]);
    running.push(jwks);
    const gw = await gateway({ jwksUrl: jwks.url, jwksCooldownMs: 60_000 });
    assert.equal(jwks.fetches(), 1, 'fetched once at start-up');
    assert.equal((await get(`${gw.url}/api/customers/1`, bearer(await signToken(first)))).status, 200);
    assert.equal(jwks.fetches(), 1);
    // A flood of tokens with unknown kids does not hammer the JWKS server.
    const stranger = await makeKey('ES256', 'k-unknown');
    for (let i = 0; i < 20; i++) {
      assert.equal((await get(`${gw.url}/api/customers/1`, bearer(await signToken(stranger, { claims: { sub: `s${i}` } })))).status, 401);
    }
    assert.ok(jwks.fetches() <= 2, `fetched ${jwks.fetches()} times`);
  });

  test('auth.jwksUrl picks up a rotated key on its unknown kid once the cooldown allows', async () => {
    const first = await makeKey('ES256', 'r1');
    const rotated = await makeKey('ES256', 'r2');
    const jwks = await startJwksServer([first.publicJwk]);
    running.push(jwks);
    const gw = await gateway({ jwksUrl: jwks.url, jwksCooldownMs: 0 });
    jwks.setKeys([first.publicJwk, rotated.publicJwk]);
    assert.equal((await get(`${gw.url}/api/customers/1`, bearer(await signToken(rotated)))).status, 200);
    assert.equal(jwks.fetches(), 2);
  });

  test('dev mode makes a key once, keeps it across restarts, and accepts tokens minted with it', async () => {
    const devKeyDir = join(dir, 'dev');
    const gw = await gateway({ devKeyDir });
    assert.equal(gw.gateway.keySource.mode, 'dev');
    const keys = await loadOrCreateDevKeys(devKeyDir);
    assert.equal(keys.kid, gw.gateway.keySource.devKeys?.kid, 'the same key on a second load');
    const token = await mintDevToken(keys, { sub: 'me', scope: 'customers:read', ttlSeconds: 60 });
    assert.equal((await get(`${gw.url}/api/customers/1`, bearer(token))).status, 200);
    const noScope = await mintDevToken(keys, { sub: 'me', scope: 'other', ttlSeconds: 60 });
    assert.equal((await get(`${gw.url}/api/customers/1`, bearer(noScope))).status, 403);
  });
});

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { assertNoHiddenClassPer, hiddenClassesMade, importFromSrc } from '../helpers/map-log.ts';

const TOKENS = 5000;

/**
 * Regression (bench/RESULTS.md, memory): each new token left two hidden classes (a map and its
 * descriptor array each, in the old generation). Our options were `{ ...options, currentDate }`,
 * and jose, given a getKey function, returns `{ ...result, key }`. A child process verifies 5,000
 * new HS256 tokens through a real TokenVerifier with V8's map log on.
 */
describe('verifying new tokens', () => {
  test('makes no hidden class per token', async () => {
    const { stdout, madeFor } = await hiddenClassesMade([
      `import { SignJWT } from ${JSON.stringify(import.meta.resolve('jose'))};`,
      importFromSrc('configWith', 'gateway/load-config.ts'),
      importFromSrc('resolveKeySource', 'auth/keys.ts'),
      importFromSrc('TokenVerifier', 'auth/verifier.ts'),
      importFromSrc('systemClock', 'lib/clock.ts'),
      "const secret = 'a-test-secret-of-thirty-two-bytes!';",
      "const auth = configWith({ auth: { secret, algorithms: ['HS256'] } }).auth;",
      'const verifier = new TokenVerifier(auth, await resolveKeySource(auth), systemClock, []);',
      // Signing with raw bytes would import a CryptoKey per token, which makes maps of its own.
      "const key = await crypto.subtle.importKey('raw', new TextEncoder().encode(secret), { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']);",
      'let verified = 0;',
      `for (let i = 0; i < ${TOKENS}; i++) {`,
      "  const token = await new SignJWT({ sub: `user-${i}` }).setProtectedHeader({ alg: 'HS256', typ: 'JWT' }).setExpirationTime('1h').sign(key);",
      '  if ((await verifier.verify(token)).subject === `user-${i}`) verified++;',
      '}',
      'process.stdout.write(String(verified));',
    ]);
    assert.equal(stdout, String(TOKENS));
    assertNoHiddenClassPer(madeFor, TOKENS, 'tokens');
  });
});

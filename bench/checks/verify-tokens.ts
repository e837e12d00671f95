/**
 * Verifies `count` new HS256 tokens through a real TokenVerifier and prints how many verified: the
 * workload of hidden-classes.test.ts, run there with V8's map log on.
 */
import { SignJWT } from 'jose';
import { resolveKeySource } from '../../src/auth/keys.ts';
import { TokenVerifier } from '../../src/auth/verifier.ts';
import { configWith } from '../../src/gateway/load-config.ts';
import { systemClock } from '../../src/lib/clock.ts';
import { countArgument } from './map-log.ts';

const count = countArgument();
const secret = 'a-test-secret-of-thirty-two-bytes!';
// With a key source, a resource on the default service needs upstream.url (nothing is sent to it here).
const auth = configWith({ upstream: { url: 'http://127.0.0.1:9' }, auth: { secret, algorithms: ['HS256'] } }).auth;
const verifier = new TokenVerifier(auth, await resolveKeySource(auth), systemClock, []);
// Signing with raw bytes would import a CryptoKey per token, which makes maps of its own.
const key = await crypto.subtle.importKey('raw', new TextEncoder().encode(secret), { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']);
let verified = 0;
for (let i = 0; i < count; i++) {
  const token = await new SignJWT({ sub: `user-${i}` }).setProtectedHeader({ alg: 'HS256', typ: 'JWT' }).setExpirationTime('1h').sign(key);
  if ((await verifier.verify(token)).subject === `user-${i}`) verified++;
}
process.stdout.write(String(verified));

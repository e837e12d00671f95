import type { IncomingMessage } from 'node:http';
import { SignJWT } from 'jose';
import { ApiKeyAuthenticator } from '../../src/auth/api-keys/authenticator.ts';
import { consumerOf } from '../../src/auth/api-keys/consumer.ts';
import { apiKeyHash, newApiKey } from '../../src/auth/api-keys/key-format.ts';
import { authorize, type AuthGate } from '../../src/auth/authenticate.ts';
import { ClaimTable } from '../../src/auth/claims.ts';
import { resolveKeySource } from '../../src/auth/keys.ts';
import { TokenVerifier } from '../../src/auth/verifier.ts';
import { configWith } from '../../src/gateway/load-config.ts';
import { systemClock } from '../../src/lib/clock.ts';
import { interleaved, type Comparison } from './timing.ts';

const SECRET = 'a secret of at least thirty-two bytes, for HS256';

function request(authorization: string): IncomingMessage {
  return {
    headers: { host: '127.0.0.1:8080', accept: 'application/json', authorization },
    rawHeaders: ['Host', '127.0.0.1:8080', 'Accept', 'application/json', 'Authorization', authorization],
  } as unknown as IncomingMessage;
}

/**
 * authorize() as a request runs it: a JWT already in the verified-token cache (with and without
 * API keys configured: the Bearer path must not pay for them), and an API key from the key file
 * (parse, checksum, SHA-256, map lookup). A key from Redis within its 1 s answer costs the same
 * plus one LRU lookup.
 */
export async function apiKey(ms: number): Promise<Comparison[]> {
  const config = configWith({ upstream: { url: 'http://127.0.0.1:9' }, auth: { secret: SECRET, algorithms: ['HS256'] } });
  const keySource = await resolveKeySource(config.auth);
  const verifier = new TokenVerifier(config.auth, keySource, systemClock, ['customers:read']);
  const token = await new SignJWT({ sub: 'user-1', scope: 'customers:read' })
    .setProtectedHeader({ alg: 'HS256' })
    .setExpirationTime('2h')
    .sign(new TextEncoder().encode(SECRET));
  await verifier.verify(token);
  const key = newApiKey('hg_');
  const keys = new ApiKeyAuthenticator(config.auth.apiKeys, {
    file: new Map([[apiKeyHash(key), consumerOf('partner', ['customers:read'], {}, 'gold')]]),
    store: null,
    keptScopes: ['customers:read'],
    claims: new ClaimTable([]),
    clock: systemClock,
    tally: { ok: 0, malformed: 0, unknown: 0, unavailable: 0 },
  });
  const plain: AuthGate = { verifier, auth: config.auth };
  const withKeys: AuthGate = { verifier, auth: config.auth, apiKeys: keys };
  const bearerReq = request(`Bearer ${token}`);
  const keyReq = request(`ApiKey ${key}`);
  return [
    {
      title: 'authorize(): a cached JWT and an API key from the key file',
      choice:
        'hypergate: an API key is read only where the Bearer path found no bearer token (src/auth/authenticate.ts), so a cached JWT costs the same with keys configured; a key is checked (prefix, checksum), hashed (SHA-256) and looked up in a map.',
      rows: interleaved(
        [
          ['cached JWT, no API keys configured', () => authorize(bearerReq, plain, 'customers:read')],
          ['cached JWT, API keys configured (hypergate)', () => authorize(bearerReq, withKeys, 'customers:read')],
          ['API key from the key file (hypergate)', () => authorize(keyReq, withKeys, 'customers:read')],
        ],
        ms,
      ),
    },
  ];
}

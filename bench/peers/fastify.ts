/**
 * The peer: the same job as hypergate's GET /api/customers/<id>, written the way Fastify and
 * @fastify/jwt document it. ES256 bearer token verified by @fastify/jwt in verify-only mode
 * (`secret: { public }`) with an algorithm allow-list, issuer and audience; the customers:read
 * scope checked; the customer fetched from the same upstream with an undici Pool, rendered as the
 * same JSON with links, kept in an lru-cache for 60 s, and answered with Cache-Control, ETag and
 * Age, or 304 for a matching If-None-Match.
 *
 * Logging is off (Fastify's default), so the peer pays no logging cost while hypergate, with its
 * default log.access on, does: the comparison leans the peer's way.
 *
 * Compiled by the harness (bench/tsconfig.servers.json) and run with hypergate's production Node
 * flags, as the baseline is:
 *
 *   node <flags of npm start> dist-bench/peers/fastify.js <port> <upstream url> <public key pem> <verify cache size, 0 = off>
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import fastifyJwt from '@fastify/jwt';
import Fastify, { type FastifyReply } from 'fastify';
import { LRUCache } from 'lru-cache';
import { Pool } from 'undici';
import { AUDIENCE, ISSUER, SCOPE } from '../lib/jwt.ts';

const port = Number(process.argv[2]);
const upstreamUrl = process.argv[3] as string;
const publicKey = readFileSync(process.argv[4] as string, 'utf8');
const verifyCache = Number(process.argv[5] ?? 0);
const MAX_AGE_SECONDS = 60;

interface Entry {
  readonly body: Buffer;
  readonly etag: string;
  readonly storedAtMs: number;
}

const upstream = new Pool(upstreamUrl, { connections: 64 });
const cache = new LRUCache<string, Entry>({ max: 100_000, ttl: MAX_AGE_SECONDS * 1000 });
const ID = /^[1-9][0-9]{0,15}$/;

const app = Fastify();
await app.register(fastifyJwt, {
  secret: { public: publicKey },
  verify: {
    algorithms: ['ES256'],
    allowedIss: ISSUER,
    allowedAud: AUDIENCE,
    // @fastify/jwt's verify cache (fast-jwt's LRU, token hashed for its key); `true` would mean
    // 1,000 entries, too few for the tokens scenario, so it gets hypergate's token cache size.
    ...(verifyCache > 0 ? { cache: verifyCache } : {}),
  },
});

app.addHook('onRequest', async (request, reply) => {
  await request.jwtVerify();
  const scope = (request.user as { scope?: unknown }).scope;
  if (typeof scope !== 'string' || !scope.split(' ').includes(SCOPE)) {
    return reply.code(403).header('www-authenticate', `Bearer error="insufficient_scope", scope="${SCOPE}"`).send({ error: 'insufficient_scope' });
  }
});

function answer(reply: FastifyReply, ifNoneMatch: string | undefined, entry: Entry): Buffer | undefined {
  const age = Math.max(0, Math.floor((Date.now() - entry.storedAtMs) / 1000));
  reply.header('cache-control', `max-age=${MAX_AGE_SECONDS}`).header('etag', entry.etag).header('age', age);
  if (ifNoneMatch === entry.etag) {
    reply.code(304);
    return undefined;
  }
  reply.header('content-type', 'application/json');
  return entry.body;
}

app.get<{ Params: { id: string } }>('/api/customers/:id', async (request, reply) => {
  const { id } = request.params;
  if (!ID.test(id)) return reply.code(404).send({ error: 'not found' });
  const path = `/api/customers/${id}`;
  const ifNoneMatch = request.headers['if-none-match'];
  const cached = cache.get(path);
  if (cached !== undefined) return reply.send(answer(reply, ifNoneMatch, cached));
  const res = await upstream.request({ method: 'GET', path: `/customers/${id}` });
  if (res.statusCode === 404) {
    await res.body.dump();
    return reply.code(404).send({ error: 'not found' });
  }
  if (res.statusCode !== 200) {
    await res.body.dump();
    return reply.code(502).send({ error: 'bad gateway' });
  }
  const record = (await res.body.json()) as { id: number; name: string; status: string };
  const body = Buffer.from(JSON.stringify({ id: Number(id), name: record.name, status: record.status, links: { self: path, orders: `${path}/orders` } }));
  const entry: Entry = { body, etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"`, storedAtMs: Date.now() };
  cache.set(path, entry);
  return reply.send(answer(reply, ifNoneMatch, entry));
});

await app.listen({ port, host: '127.0.0.1' });

// The harness stops it with SIGKILL; --profile with SIGTERM, on which `node --cpu-prof` writes its profile only through a normal exit.
process.on('SIGTERM', () => process.exit(0));

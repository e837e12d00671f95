import type { IncomingMessage, ServerResponse } from 'node:http';
import { consumerOf, consumerProblem } from '../auth/api-keys/consumer.ts';
import { ApiKeyStoreUnavailable, type ApiKeyAdmin, type ApiKeyRecord, type IssuedApiKey } from '../auth/api-keys/store.ts';
import type { Principal } from '../auth/principal.ts';
import { HgError } from '../lib/errors.ts';
import type { Logger } from '../observability/logger.ts';

/** Where keys made through the admin API are kept, and the prefix new keys get (auth.apiKeys). */
export interface ApiKeysAdminParts {
  readonly store: ApiKeyAdmin;
  readonly prefix: string;
}

export const API_KEYS_PATH = '/api-keys';
/** Largest request body of these endpoints. */
const MAX_BODY_BYTES = 64 * 1024;
/** Longest overlap of a rotation: 30 days. */
const MAX_OVERLAP_SECONDS = 30 * 24 * 3600;
const ID = /^[A-Za-z0-9_-]{1,64}$/;

/** A record as the admin API shows it: never the key, never its hash. */
function shown(record: ApiKeyRecord): Record<string, unknown> {
  return {
    id: record.id,
    consumer: record.consumer,
    scopes: record.scopes,
    claims: record.claims,
    plan: record.plan,
    createdAt: new Date(record.createdAtMs).toISOString(),
    expiresAt: record.expiresAtMs === null ? null : new Date(record.expiresAtMs).toISOString(),
  };
}

/** A new key's answer: its record and, this once, the key. */
function issued(made: IssuedApiKey): Record<string, unknown> {
  return { ...shown(made.record), key: made.key };
}

function unprocessable(detail: string): HgError {
  return new HgError('HG_ERR_UNPROCESSABLE', { detail });
}

async function readJson(req: IncomingMessage): Promise<Record<string, unknown>> {
  const chunks: Buffer[] = [];
  let length = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    length += chunk.length;
    if (length > MAX_BODY_BYTES) throw new HgError('HG_ERR_PAYLOAD_TOO_LARGE', { detail: `The request body is larger than ${MAX_BODY_BYTES} bytes.` });
    chunks.push(chunk);
  }
  if (length === 0) return {};
  let value: unknown;
  try {
    value = JSON.parse(Buffer.concat(chunks).toString('utf8'));
  } catch {
    throw new HgError('HG_ERR_INVALID_BODY');
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw unprocessable('The request body must be a JSON object.');
  return value as Record<string, unknown>;
}

/** The store did not answer: 503, naming no key. */
async function stored<T>(work: Promise<T>): Promise<T> {
  try {
    return await work;
  } catch (err) {
    if (!(err instanceof ApiKeyStoreUnavailable)) throw err;
    throw new HgError('HG_ERR_AUTH_KEYS_UNAVAILABLE', {
      detail: 'The API key store (Redis) did not answer in time; try again.',
      headers: { 'Retry-After': '1' },
    });
  }
}

function methodNotAllowed(allow: string): HgError {
  return new HgError('HG_ERR_METHOD_NOT_ALLOWED', { headers: { Allow: allow } });
}

/**
 * The admin API of keys kept in Redis (docs/operations.md "API keys"): `POST /api-keys` makes one
 * (the key is in that answer only), `GET /api-keys` lists them (never a key nor its hash),
 * `DELETE /api-keys/<id>` revokes one, `POST /api-keys/<id>/rotate` makes its successor and keeps
 * it working `overlapSeconds`. Every call needs the admin scope (`authorize`); log lines name the
 * key's id and consumer, never the key.
 */
export async function handleApiKeys(
  parts: ApiKeysAdminParts,
  authorize: (req: IncomingMessage) => Principal | Promise<Principal>,
  logger: Logger,
  req: IncomingMessage,
  path: string,
  send: (status: number, body: unknown, headOnly: boolean) => void,
  res: ServerResponse,
): Promise<void> {
  const method = req.method ?? 'GET';
  const rest = path.slice(API_KEYS_PATH.length);
  if (rest === '') {
    if (method === 'GET' || method === 'HEAD') {
      await authorize(req);
      const records = await stored(parts.store.list());
      send(200, { apiKeys: records.map(shown) }, method === 'HEAD');
      return;
    }
    if (method !== 'POST') throw methodNotAllowed('GET, HEAD, POST');
    const who = await authorize(req);
    const body = await readJson(req);
    const problem = consumerProblem(body['consumer'], body['scopes'], body['claims'], body['plan']);
    if (problem !== null) throw unprocessable(`${problem}.`);
    const made = await stored(parts.store.create(consumerOf(body['consumer'] as string, body['scopes'], body['claims'], body['plan']), parts.prefix));
    logger.info('api key created', { event: 'api-key', action: 'create', id: made.record.id, consumer: made.record.consumer, sub: who.subject });
    res.setHeader('Location', `${API_KEYS_PATH}/${made.record.id}`);
    send(201, issued(made), false);
    return;
  }
  const match = /^\/([^/]+)(\/rotate)?$/.exec(rest);
  const id = match?.[1];
  if (match === null || id === undefined || !ID.test(id)) throw new HgError('HG_ERR_ROUTE_NOT_FOUND');
  if (match[2] === undefined) {
    if (method !== 'DELETE') throw methodNotAllowed('DELETE');
    const who = await authorize(req);
    if (!(await stored(parts.store.revoke(id)))) throw new HgError('HG_ERR_RESOURCE_NOT_FOUND', { detail: `No API key has the id "${id}".` });
    logger.info('api key revoked', { event: 'api-key', action: 'revoke', id, sub: who.subject });
    res.writeHead(204, { 'Cache-Control': 'no-store' });
    res.end();
    return;
  }
  if (method !== 'POST') throw methodNotAllowed('POST');
  const who = await authorize(req);
  const body = await readJson(req);
  const overlap = body['overlapSeconds'] ?? 0;
  if (typeof overlap !== 'number' || !Number.isInteger(overlap) || overlap < 0 || overlap > MAX_OVERLAP_SECONDS) {
    throw unprocessable(`"overlapSeconds" must be a whole number of seconds from 0 to ${MAX_OVERLAP_SECONDS}.`);
  }
  const made = await stored(parts.store.rotate(id, overlap, parts.prefix));
  if (made === null) throw new HgError('HG_ERR_RESOURCE_NOT_FOUND', { detail: `No API key has the id "${id}".` });
  logger.info('api key rotated', {
    event: 'api-key',
    action: 'rotate',
    id: made.record.id,
    replaces: id,
    overlapSeconds: overlap,
    consumer: made.record.consumer,
    sub: who.subject,
  });
  res.setHeader('Location', `${API_KEYS_PATH}/${made.record.id}`);
  send(201, { ...issued(made), replaces: id }, false);
}

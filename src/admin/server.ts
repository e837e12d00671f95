import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { AdminBackend } from './backend.ts';
import { API_KEYS_PATH, handleApiKeys } from './api-keys.ts';
import { HgError } from '../lib/errors.ts';
import { handleClientError } from '../http/client-error.ts';
import { sendProblem } from '../protocol/problem.ts';
import { routableTarget } from '../http/request-target.ts';
import { listenOn } from '../http/lifecycle.ts';
import type { Logger } from '../observability/logger.ts';

const PURGE_PREFIX = '/cache/';
const RESOURCE_PREFIX = '/resources/';

function sendJson(res: ServerResponse, status: number, body: unknown, headOnly: boolean): void {
  const bytes = Buffer.from(JSON.stringify(body));
  res.writeHead(status, { 'Content-Type': 'application/json', 'Content-Length': bytes.length, 'Cache-Control': 'no-store' });
  res.end(headOnly ? undefined : bytes);
}

function methodNotAllowed(allow: string): HgError {
  return new HgError('HG_ERR_METHOD_NOT_ALLOWED', { headers: { Allow: allow } });
}

/** A resource name as typed in the path (`/resources/my%20things`); one that does not decode names nothing. */
function decodeName(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

async function handle(backend: AdminBackend, logger: Logger, req: IncomingMessage, res: ServerResponse): Promise<void> {
  // An absolute-form target (`GET http://host:9091/metrics`) is its path, as on the public port (RFC 9112 section 3.2.2).
  const url = routableTarget(req.url ?? '/');
  const q = url.indexOf('?');
  const path = q === -1 ? url : url.slice(0, q);
  const method = req.method ?? 'GET';
  const read = method === 'GET' || method === 'HEAD';
  const headOnly = method === 'HEAD';
  switch (path) {
    case '/healthz':
      if (!read) throw methodNotAllowed('GET, HEAD');
      sendJson(res, 200, { status: 'ok' }, headOnly);
      return;
    case '/readyz': {
      if (!read) throw methodNotAllowed('GET, HEAD');
      const { reason, warnings } = await backend.readiness();
      if (reason !== null) throw new HgError('HG_ERR_NOT_READY', { detail: `Not ready: ${reason}.`, headers: { 'Retry-After': '1' } });
      sendJson(res, 200, warnings.length === 0 ? { status: 'ready' } : { status: 'ready', warnings }, headOnly);
      return;
    }
    case '/metrics': {
      if (!read) throw methodNotAllowed('GET, HEAD');
      const { contentType, body } = await backend.metrics();
      const bytes = Buffer.from(body);
      res.writeHead(200, { 'Content-Type': contentType, 'Content-Length': bytes.length, 'Cache-Control': 'no-store' });
      res.end(headOnly ? undefined : bytes);
      return;
    }
    case '/reload': {
      if (backend.reload === undefined) break;
      if (method !== 'POST') throw methodNotAllowed('POST');
      const who = await backend.authorize(req);
      logger.info('reload requested', { event: 'reload', sub: who.subject });
      sendJson(res, 200, await backend.reload(), false);
      return;
    }
    case '/cache': {
      if (method !== 'DELETE') throw methodNotAllowed('DELETE');
      const who = await backend.authorize(req);
      const result = await backend.purge(null);
      logger.info('cache purged', { event: 'cache-purge', scope: 'all', purged: result.purged, instances: result.instances, sub: who.subject });
      sendJson(res, 200, result, false);
      return;
    }
    case '/config':
    case '/routes': {
      const inspection = backend.inspection;
      if (inspection === undefined) break;
      if (!read) throw methodNotAllowed('GET, HEAD');
      await backend.authorize(req);
      sendJson(res, 200, path === '/config' ? inspection.config() : inspection.routes(), headOnly);
      return;
    }
  }
  if (backend.inspection !== undefined && path.startsWith(RESOURCE_PREFIX) && path.length > RESOURCE_PREFIX.length) {
    if (!read) throw methodNotAllowed('GET, HEAD');
    await backend.authorize(req);
    sendJson(res, 200, backend.inspection.resource(decodeName(path.slice(RESOURCE_PREFIX.length))), headOnly);
    return;
  }
  const apiKeys = path === API_KEYS_PATH || path.startsWith(`${API_KEYS_PATH}/`) ? (backend.apiKeys?.() ?? null) : null;
  if (apiKeys !== null) {
    await handleApiKeys(
      apiKeys,
      (r) => backend.authorize(r),
      logger,
      req,
      path,
      (status, body, head) => sendJson(res, status, body, head),
      res,
    );
    return;
  }
  if (path.startsWith(PURGE_PREFIX)) {
    if (method !== 'DELETE') throw methodNotAllowed('DELETE');
    const who = await backend.authorize(req);
    // The public path as clients spell it: /cache/api/customers/88 (or /cache/customers/88).
    const target = path.slice(PURGE_PREFIX.length - 1);
    const result = await backend.purge(target);
    logger.info('cache purged', { event: 'cache-purge', scope: 'path', path: target, purged: result.purged, instances: result.instances, sub: who.subject });
    sendJson(res, 200, result, false);
    return;
  }
  throw new HgError('HG_ERR_ROUTE_NOT_FOUND');
}

/**
 * The admin listener: health, readiness, metrics, cache purge, reload and what is being served (config,
 * routes, resources) on their own address, so none of
 * it is reachable through the public port. Not a hot path: written for clarity.
 */
export function createAdminServer(backend: AdminBackend, logger: Logger): Server {
  const server = createServer({ headersTimeout: 10_000, requestTimeout: 30_000 }, (req, res) => {
    handle(backend, logger, req, res).catch((err: unknown) => {
      const error = err instanceof HgError ? err : new HgError('HG_ERR_INTERNAL');
      if (!(err instanceof HgError)) logger.error('admin request failed', { path: req.url, error: (err as Error).message });
      sendProblem(res, error, req.method === 'HEAD');
    });
  });
  server.on('clientError', handleClientError);
  return server;
}

export function listenAdmin(server: Server, host: string, port: number): Promise<AddressInfo> {
  return listenOn(server, port, host);
}

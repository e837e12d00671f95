import type { IncomingMessage } from 'node:http';
import type { HgResponse } from '../http/response.ts';
import { Representation } from '../cache/representation.ts';
import type { GatewayContext } from '../context.ts';
import { HgError } from '../errors.ts';
import { acceptsJson } from '../http/negotiate.ts';
import { getAndHead, type RouteDef } from '../http/router.ts';
import { generateOpenApi } from '../openapi/generate.ts';
import type { Access } from './access.ts';
import { OPENAPI_PATH } from './api-root.ts';
import { writeRepresentation, type ResourceKit } from './kit.ts';

const VERSION = '0.1.0';

/**
 * GET/HEAD /api/openapi.json: the OpenAPI 3.1 document generated from `table()`, the very list
 * the router is built from (this route included). Rendered on first use, then cached like any
 * resource.
 */
export function openApiRoutes(ctx: GatewayContext, kit: ResourceKit, access: Access, table: () => readonly RouteDef[]): RouteDef[] {
  const { config, cache, clock } = ctx;
  let body: string | null = null;

  const serve = (req: IncomingMessage, res: HgResponse): void => {
    if (!acceptsJson(req.headers.accept)) throw new HgError('HG_ERR_NOT_ACCEPTABLE', { detail: 'This resource is available as application/json.' });
    const now = clock.now();
    let rep = cache.fresh(OPENAPI_PATH, now);
    if (rep === undefined) {
      body ??= JSON.stringify(generateOpenApi(table(), { title: 'hypergate', version: VERSION, requiredScope: config.auth.requiredScope, readAnyScope: config.auth.readAnyScope, rateLimited: access.rateLimited }));
      const f = kit.localFreshness();
      rep = new Representation(body, 'application/json', f.cacheControl, f.storedAtMs, f.expiresAtMs, kit.vary);
      cache.set(OPENAPI_PATH, rep);
    }
    writeRepresentation(req, res, rep, now);
  };

  const readDocument = (req: IncomingMessage, res: HgResponse): void | Promise<void> => {
    const principal = access.any(req);
    return principal instanceof Promise ? principal.then(() => serve(req, res)) : serve(req, res);
  };

  return getAndHead(OPENAPI_PATH, readDocument, {
    operationId: 'getOpenApi',
    summary: 'This OpenAPI document',
    description: 'The OpenAPI 3.1 description of every route, generated from the route table the router uses.',
    params: [],
    scopes: [config.auth.requiredScope],
    ok: { description: 'The OpenAPI document.', content: { 'application/json': 'OpenApiDocument' } },
    errors: [],
  });
}

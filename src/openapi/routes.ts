import type { IncomingMessage } from 'node:http';
import { CacheEntry } from '../cache/cache-entry.ts';
import { Representation } from '../cache/representation.ts';
import type { GatewayContext } from '../resources/context.ts';
import { HgError } from '../lib/errors.ts';
import { acceptsJson } from '../protocol/negotiate.ts';
import type { HgResponse } from '../protocol/response.ts';
import { getAndHead, type RouteDef } from '../protocol/route.ts';
import { JSON_INDEX } from '../hypermedia/formats.ts';
import { generateOpenApi } from './generate.ts';
import { componentSchemas } from './schemas.ts';
import type { Access } from '../resources/access.ts';
import { apiRootResource, OPENAPI_PATH } from '../resources/api-root.ts';
import type { ResourceTable } from '../resources/compile.ts';
import { writeRepresentation } from '../resources/send-representation.ts';
import type { ServingParts } from '../resources/serving-parts.ts';

const VERSION = '0.1.0';

/**
 * GET/HEAD /api/openapi.json: the OpenAPI 3.1 document generated from `routes()`, the very list
 * the router is built from (this route included), with schemas from the resource table. Rendered
 * on first use, then cached like any resource.
 */
export function openApiRoutes(ctx: GatewayContext, parts: ServingParts, access: Access, routes: () => readonly RouteDef[], table: ResourceTable): RouteDef[] {
  const { config, cache, clock } = ctx;
  let body: string | null = null;

  const serve = (req: IncomingMessage, res: HgResponse): void => {
    if (!acceptsJson(req.headers.accept)) throw new HgError('HG_ERR_NOT_ACCEPTABLE', { detail: 'This resource is available as application/json.' });
    const now = clock.now();
    let rep = cache.fresh(OPENAPI_PATH, now)?.variant(JSON_INDEX);
    if (rep === undefined) {
      body ??= JSON.stringify(
        generateOpenApi(routes(), {
          title: 'hypergate',
          version: VERSION,
          requiredScope: config.auth.requiredScope,
          readAnyScope: config.auth.readAnyScope,
          rateLimited: access.rateLimited,
          introspection: config.auth.introspection.url !== null,
          cors: config.cors.origins.length > 0,
          ...(config.auth.apiKeys.file === null && !config.auth.apiKeys.redis ? {} : { apiKeys: { header: config.auth.apiKeys.header } }),
          schemas: componentSchemas(table, apiRootResource(table, config)),
        }),
      );
      const f = parts.entries.localFreshness();
      rep = new Representation(body, 'application/json', f.cacheControl, f.storedAtMs, f.expiresAtMs, parts.entries.vary);
      cache.set(OPENAPI_PATH, new CacheEntry([rep], f, [], null));
    }
    writeRepresentation(req, res, rep, now);
  };

  const scope = config.auth.requiredScope;
  const readDocument = (req: IncomingMessage, res: HgResponse): void | Promise<void> => {
    const principal = access.scoped(req, scope);
    return principal instanceof Promise ? principal.then(() => serve(req, res)) : serve(req, res);
  };

  return getAndHead(OPENAPI_PATH, readDocument, {
    operationId: 'getOpenApi',
    summary: 'This OpenAPI document',
    description: 'The OpenAPI 3.1 description of every route, generated from the route table the router uses.',
    params: [],
    scopes: [scope],
    ok: { description: 'The OpenAPI document.', content: { 'application/json': 'OpenApiDocument' } },
    errors: [],
  });
}

import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import type { RouteDef, RouteMethod } from '../protocol/route.ts';
import { ANONYMOUS } from '../auth/principal.ts';
import { HgError, type HgErrorCode } from '../lib/errors.ts';
import { upgradeHeadOf, type HgResponse } from '../protocol/response.ts';
import type { ParamDoc, RouteDoc } from '../protocol/route-doc.ts';
import { callOf } from '../upstream/trace-context.ts';
import { routeAccess, type RouteAccessParts } from './access.ts';
import type { CompiledRoute } from './compile.ts';
import type { Limiter } from '../auth/rate-limit.ts';
import type { PassthroughServices } from './pools.ts';
import { relay, type RelayObserver } from './relay.ts';
import { asksForWebSocket, handshakeKey } from './websocket.ts';

/** What the pass-through routes are built from. */
export interface PassthroughParts extends RouteAccessParts {
  readonly services: PassthroughServices;
  readonly observer: RelayObserver;
  readonly tunnels: Set<Duplex>;
  /** The limiter of a route with its own limit (routes.<name>.rateLimit); absent when none has one. */
  readonly limiterOf?: (route: CompiledRoute) => Limiter | null;
}

const WITH_BODY: ReadonlySet<RouteMethod> = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/** The upstream path and query for a request on `route` whose path matched as `values`. */
function upstreamPath(route: CompiledRoute, basePath: string, values: ReadonlyMap<string, string>, url: string): string {
  const q = url.indexOf('?');
  return basePath + route.upstream.build(values) + (q === -1 ? '' : url.slice(q));
}

/** The route's handler: match, authorize, then relay (or tunnel an opening WebSocket handshake). */
function handlerOf(route: CompiledRoute, parts: PassthroughParts) {
  return async (req: IncomingMessage, res: HgResponse, path: string): Promise<void> => {
    const values = route.path.match(path);
    if (values === null) throw new HgError('HG_ERR_ROUTE_NOT_FOUND');
    // Only a request node:http handed over as an upgrade can be tunnelled; any other is a plain request.
    const websocket = route.websocket && upgradeHeadOf(req) !== undefined && asksForWebSocket(req);
    const websocketKey = websocket ? handshakeKey(req) : null;
    const principal = await routeAccess(req, route, parts);
    const service = parts.services.get(route.service);
    const call = principal === ANONYMOUS ? { ...callOf(req, res.requestId), authorization: undefined } : callOf(req, res.requestId, principal.claims);
    await relay(req, res, {
      route,
      service,
      path: upstreamPath(route, service.basePath, values, req.url ?? '/'),
      call,
      websocketKey,
      observer: parts.observer,
      tunnels: parts.tunnels,
      keyHeader: parts.apiKeys?.header ?? null,
    });
  };
}

/** What the OpenAPI document says of a route. */
function docOf(route: CompiledRoute, method: RouteMethod): RouteDoc {
  const params: ParamDoc[] = route.path.segments.flatMap((s) =>
    'param' in s
      ? [
          {
            name: s.param,
            in: 'path' as const,
            required: true,
            description: s.rest ? 'The rest of the path, one segment or more ("/" included), passed on as written.' : 'One path segment, passed on as written.',
            schema: { type: 'string' },
          },
        ]
      : [],
  );
  const errors: HgErrorCode[] = ['HG_ERR_ROUTE_NOT_FOUND', 'HG_ERR_UPSTREAM_BAD_GATEWAY', 'HG_ERR_UPSTREAM_TIMEOUT', 'HG_ERR_UPSTREAM_UNAVAILABLE'];
  if (route.websocket && method === 'GET') errors.push('HG_ERR_BAD_REQUEST');
  const publicRead = route.public && (method === 'GET' || method === 'HEAD');
  return {
    operationId: `${method === 'HEAD' ? 'head' : method.toLowerCase()}Route${route.name.charAt(0).toUpperCase()}${route.name.slice(1).replace(/[-_](.)/g, (_, c: string) => c.toUpperCase())}`,
    summary: `Pass-through route ${route.name}`,
    description:
      `Passed through to the upstream service "${route.service}" (${route.upstream.text}) with the query string as sent; the answer is the upstream's, streamed, neither cached nor rendered.` +
      (route.websocket && method === 'GET'
        ? ' A WebSocket opening handshake (Upgrade: websocket) is tunnelled to the upstream once the token is checked.'
        : ''),
    params,
    scopes: [route.scope],
    public: publicRead,
    ok: { description: "The upstream's answer, passed through as it is (its hop-by-hop headers and Set-Cookie left out).", content: {} },
    errors,
    passthrough: { path: route.path.openApiPath, body: WITH_BODY.has(method), websocket: route.websocket && method === 'GET' },
  };
}

/** The routes of every pass-through route, one per method, for the router (and so for the OpenAPI document). */
export function passthroughRoutes(routes: readonly CompiledRoute[], parts: PassthroughParts): RouteDef[] {
  const defs: RouteDef[] = [];
  for (const route of routes) {
    const handler = handlerOf(route, parts.limiterOf === undefined ? parts : { ...parts, limiter: parts.limiterOf(route) });
    const fits = (path: string): boolean => route.path.match(path) !== null;
    for (const method of route.methods) defs.push({ method, path: route.label, handler, doc: docOf(route, method), acceptsBody: WITH_BODY.has(method), fits });
  }
  return defs;
}

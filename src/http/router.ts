import FindMyWay from 'find-my-way';
import { HgError } from '../lib/errors.ts';
import { UNMATCHED_ROUTE, type RequestStats } from '../observability/request-stats.ts';
import type { RouteDef, RouteHandler, RouteMethod } from '../protocol/route.ts';

const ALL_METHODS: readonly RouteMethod[] = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'];

/** What a match gives: the handler and the index of its route pattern in the request metrics. */
export interface RouteEntry {
  readonly handler: RouteHandler;
  readonly routeIndex: number;
  readonly acceptsBody: boolean;
  readonly fits: ((path: string) => boolean) | undefined;
}

export interface Router {
  /** The handler with its metrics index, or null. */
  lookup(method: string, path: string): RouteEntry | null;
  /** Methods that do have a handler at this path: the `Allow` of a 405, empty for a 404. */
  allowedMethods(path: string): readonly RouteMethod[];
  /** The metrics index of the route pattern at this path whatever the method (a 405's), or the unmatched index. */
  routeIndexAt(path: string): number;
  /** The table the router was built from, for the OpenAPI generator and its test. */
  readonly routes: readonly RouteDef[];
}

/** A find-my-way pattern with no parameter or wildcard: one path, spelled one way. */
function isStatic(pattern: string): boolean {
  return !pattern.includes(':') && !pattern.includes('*');
}

/**
 * find-my-way percent-decodes a path before it matches, so `/%61pi` finds the route `/api`. Only
 * the canonical spelling names a route: a route with parameters matches its template again, byte
 * for byte, in its handler and `fits`; a static route is its pattern exactly, checked here. The
 * check wraps only static routes' handlers: a route with parameters (an item's GET, the hot path)
 * is called as it was declared.
 */
function exactly(route: RouteDef): Pick<RouteEntry, 'handler' | 'fits'> {
  if (route.fits !== undefined || !isStatic(route.path)) return { handler: route.handler, fits: route.fits };
  const { path: pattern, handler } = route;
  return {
    handler: (req, res, path) => {
      if (path !== pattern) throw new HgError('HG_ERR_ROUTE_NOT_FOUND');
      return handler(req, res, path);
    },
    fits: (path) => path === pattern,
  };
}

export function createRouter(routes: readonly RouteDef[], stats?: RequestStats): Router {
  const fmw = FindMyWay({ caseSensitive: true, ignoreTrailingSlash: false, ignoreDuplicateSlashes: false, maxParamLength: 100 });
  for (const route of routes) {
    // Metrics are labelled by pattern, never by the concrete path: bounded label values.
    const stored: RouteEntry = { ...exactly(route), routeIndex: stats?.routeIndex(route.path) ?? UNMATCHED_ROUTE, acceptsBody: route.acceptsBody === true };
    fmw.on(route.method, route.path, () => {}, stored);
  }
  const lookup = (method: string, path: string): RouteEntry | null => {
    const found = fmw.find(method as RouteMethod, path);
    return found === null ? null : (found.store as RouteEntry);
  };
  /** The entry for this method when the path also fits its parameter types (the 405 and OPTIONS paths only). */
  const fitting = (method: RouteMethod, path: string): RouteEntry | null => {
    const entry = lookup(method, path);
    return entry === null || (entry.fits !== undefined && !entry.fits(path)) ? null : entry;
  };
  return {
    lookup,
    allowedMethods: (path) => ALL_METHODS.filter((m) => fitting(m, path) !== null),
    routeIndexAt: (path) => {
      for (const method of ALL_METHODS) {
        const entry = fitting(method, path);
        if (entry !== null) return entry.routeIndex;
      }
      return UNMATCHED_ROUTE;
    },
    routes,
  };
}

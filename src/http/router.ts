import type { IncomingMessage, ServerResponse } from 'node:http';
import FindMyWay from 'find-my-way';
import type { RouteDoc } from './route-doc.ts';

/** A route's handler: sync on the hot path (cache hit), a promise only when it must wait. */
export type RouteHandler = (req: IncomingMessage, res: ServerResponse, path: string) => void | Promise<void>;

export type RouteMethod = 'GET' | 'HEAD' | 'DELETE' | 'POST' | 'PUT' | 'PATCH' | 'OPTIONS';

export interface RouteDef {
  readonly method: RouteMethod;
  readonly path: string;
  readonly handler: RouteHandler;
  /** For the OpenAPI document; a route without one fails the OpenAPI test. */
  readonly doc?: RouteDoc;
}

/** A readable resource answers GET and HEAD with one handler and one description. */
export function getAndHead(path: string, handler: RouteHandler, doc: RouteDoc): RouteDef[] {
  return [
    { method: 'GET', path, handler, doc },
    { method: 'HEAD', path, handler, doc },
  ];
}

const ALL_METHODS: readonly RouteMethod[] = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'];

interface Stored {
  readonly handler: RouteHandler;
}

export interface Router {
  /** The handler for this method and path (path without query), or null. */
  match(method: string, path: string): RouteHandler | null;
  /** Methods that do have a handler at this path: the `Allow` of a 405, empty for a 404. */
  allowedMethods(path: string): readonly RouteMethod[];
  /** The table the router was built from, for the OpenAPI generator and its test. */
  readonly routes: readonly RouteDef[];
}

export function createRouter(routes: readonly RouteDef[]): Router {
  const fmw = FindMyWay({ caseSensitive: true, ignoreTrailingSlash: false, ignoreDuplicateSlashes: false, maxParamLength: 100 });
  for (const route of routes) {
    const stored: Stored = { handler: route.handler };
    fmw.on(route.method, route.path, () => {}, stored);
  }
  const find = (method: string, path: string): RouteHandler | null => {
    const found = fmw.find(method as RouteMethod, path);
    return found === null ? null : (found.store as Stored).handler;
  };
  return {
    match: find,
    allowedMethods: (path) => ALL_METHODS.filter((m) => find(m, path) !== null),
    routes,
  };
}

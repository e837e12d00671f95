import type { IncomingMessage } from 'node:http';
import type { HgResponse } from './response.ts';
import type { RouteDoc } from './route-doc.ts';

/** A route's handler: sync on the hot path (cache hit), a promise only when it must wait. */
export type RouteHandler = (req: IncomingMessage, res: HgResponse, path: string) => void | Promise<void>;

export type RouteMethod = 'GET' | 'HEAD' | 'DELETE' | 'POST' | 'PUT' | 'PATCH' | 'OPTIONS';

/**
 * A route as those who declare routes (resources, the API root, the OpenAPI document) hand it to
 * the router (http/router.ts): so they need not know the router, and the router knows none of them.
 */
export interface RouteDef {
  readonly method: RouteMethod;
  readonly path: string;
  readonly handler: RouteHandler;
  /** For the OpenAPI document; a route without one fails the OpenAPI test. */
  readonly doc?: RouteDoc;
  /** The handler reads a request body (writes); every other route refuses one with 413 unread. */
  readonly acceptsBody?: boolean;
  /**
   * Does this concrete path fit the route's parameter types? A path the pattern matches but whose
   * segments do not fit (`/api/customers/abc` for an integer id) is no resource: its handler
   * answers 404, and OPTIONS and other methods must too, not 204 or 405 with an Allow. Without it, a
   * pattern without parameters fits only its own spelling (the router answers any other 404), and
   * one with parameters any path it matches.
   */
  readonly fits?: (path: string) => boolean;
}

/** A readable resource answers GET and HEAD with one handler and one description. */
export function getAndHead(path: string, handler: RouteHandler, doc: RouteDoc, fits?: (path: string) => boolean): RouteDef[] {
  return [
    { method: 'GET', path, handler, doc, fits },
    { method: 'HEAD', path, handler, doc, fits },
  ];
}

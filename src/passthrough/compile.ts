import type { Config, RouteConfig } from '../config/types.ts';
import type { RouteMethod } from '../protocol/route.ts';
import { methodsOf } from './config-checks.ts';
import { RouteTemplate } from './route-template.ts';

/** A pass-through route as it serves: compiled once from routes.<name> at start or reload. */
export interface CompiledRoute {
  readonly name: string;
  /** The router's pattern ("/api/files/*"): the route label of the request metrics and of cut streams. */
  readonly label: string;
  readonly path: RouteTemplate;
  readonly upstream: RouteTemplate;
  /** In the order the router registers them: GET brings HEAD. */
  readonly methods: readonly RouteMethod[];
  readonly service: string;
  readonly scope: string;
  readonly public: boolean;
  /** Time to the upstream's response head; null: the service's timeoutMs. */
  readonly timeoutMs: number | null;
  readonly idleTimeoutMs: number;
  readonly maxBodyBytes: number;
  /** The key that set maxBodyBytes, for the 413's detail. */
  readonly maxBodyKey: string;
  readonly websocket: boolean;
}

const ORDER: readonly RouteMethod[] = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'];

function compileRoute(name: string, r: RouteConfig, config: Config): CompiledRoute {
  const path = RouteTemplate.parse(r.path);
  const methods = methodsOf(r);
  return {
    name,
    label: path.route,
    path,
    upstream: RouteTemplate.parse(r.upstream),
    methods: ORDER.filter((m) => methods.has(m)),
    service: r.service,
    scope: r.scope ?? config.auth.requiredScope,
    public: r.public,
    timeoutMs: r.timeoutMs,
    idleTimeoutMs: r.idleTimeoutMs,
    maxBodyBytes: r.maxBodyBytes ?? config.server.maxBodyBytes,
    maxBodyKey: r.maxBodyBytes === null ? 'server.maxBodyBytes' : `routes.${name}.maxBodyBytes`,
    websocket: r.websocket,
  };
}

/** Every declared route, compiled (the config was validated: templates parse, services exist). */
export function compileRoutes(config: Config): CompiledRoute[] {
  return Object.entries(config.routes).map(([name, r]) => compileRoute(name, r, config));
}

import { closest } from '../config/closest.ts';
import { servicesOf } from '../config/service-checks.ts';
import type { Config, RouteConfig } from '../config/types.ts';
import { RouteTemplate } from './route-template.ts';

/** Paths the gateway answers itself, whatever is declared. */
const FIXED_PATHS = ['/api', '/api/openapi.json'];
const NAME = /^[A-Za-z][A-Za-z0-9_-]*$/;

/** Parses a template, or records why it is not one under `key`; null then. */
function template(text: string, key: string, problems: string[]): RouteTemplate | null {
  const problem = RouteTemplate.problem(text);
  if (problem === null) return RouteTemplate.parse(text);
  problems.push(`${key}: ${problem}, got ${JSON.stringify(text)}`);
  return null;
}

/** The paths the gateway's own routes answer: the API root, the OpenAPI document, every resource's item and collection path. */
function declaredPaths(config: Config): [string, RouteTemplate][] {
  const paths: [string, RouteTemplate][] = FIXED_PATHS.map((p) => [`the gateway's own ${p}`, RouteTemplate.parse(p)]);
  for (const [name, r] of Object.entries(config.resources)) {
    const at = `resources.${name}`;
    const add = (text: string, key: string): void => {
      // A bad resource template is named by the resource checks.
      if (RouteTemplate.problem(text) === null) paths.push([`${key} (${text})`, RouteTemplate.parse(text)]);
    };
    add(r.path, `${at}.path`);
    if (r.collection !== null) add(r.collection.path, `${at}.collection.path`);
  }
  return paths;
}

/** The methods a route answers: GET brings HEAD. */
export function methodsOf(route: RouteConfig): ReadonlySet<string> {
  const methods = new Set<string>(route.methods);
  if (methods.has('GET')) methods.add('HEAD');
  return methods;
}

function checkRoute(name: string, r: RouteConfig, config: Config, problems: string[]): RouteTemplate | null {
  const at = `routes.${name}`;
  if (!NAME.test(name)) problems.push(`${at}: a route name starts with a letter and has only letters, digits, - and _`);
  const path = template(r.path, `${at}.path`, problems);
  const upstream = template(r.upstream, `${at}.upstream`, problems);
  if (path !== null && upstream !== null) {
    for (const segment of upstream.segments) {
      if (!('param' in segment)) continue;
      const own = path.segments.find((s) => 'param' in s && s.param === segment.param);
      if (own === undefined || !('param' in own))
        problems.push(`${at}.upstream: {${segment.param}${segment.rest ? '*' : ''}} is not a parameter of ${at}.path (${r.path})`);
      else if (own.rest !== segment.rest)
        problems.push(
          `${at}.upstream: write {${segment.param}${own.rest ? '*' : ''}} as ${at}.path does (a rest parameter takes the rest of the path, slashes included)`,
        );
    }
  }
  const services = [...servicesOf(config).keys()];
  if (!services.includes(r.service)) {
    const hint = closest(r.service, services);
    problems.push(
      `${at}.service: "${r.service}" is not a declared service ("upstream" or a key of upstreams)${hint === undefined ? '' : ` (did you mean "${hint}"?)`}`,
    );
  }
  if (r.scope !== null && /\s/.test(r.scope)) problems.push(`${at}.scope: expected a single scope without spaces`);
  const methods = methodsOf(r);
  if (r.public && !methods.has('GET') && !methods.has('HEAD'))
    problems.push(`${at}.public: lets only GET and HEAD through without credentials, and ${at}.methods has neither`);
  if (r.websocket && !methods.has('GET')) problems.push(`${at}.websocket: a WebSocket upgrade is a GET; add "GET" to ${at}.methods`);
  for (const method of new Set(r.methods.filter((m, i) => r.methods.indexOf(m) !== i))) problems.push(`${at}.methods: "${method}" is listed more than once`);
  return path;
}

/**
 * The rules a route table must keep beyond each key's own type (docs/routes.md): templates that
 * parse, upstream templates naming only the path's parameters, a declared service, and no route
 * that could match a path the gateway answers itself (a resource, the API root, the OpenAPI
 * document) or a path another route answers for one of the same methods.
 */
export function checkRoutes(config: Config, problems: string[]): void {
  const declared = declaredPaths(config);
  const seen: [string, RouteTemplate, ReadonlySet<string>][] = [];
  for (const [name, route] of Object.entries(config.routes)) {
    const path = checkRoute(name, route, config, problems);
    if (path === null) continue;
    const key = `routes.${name}.path`;
    for (const [what, other] of declared) {
      if (path.overlaps(other)) problems.push(`${key}: ${path.text} overlaps ${what}: the same paths would match both; pick a path no resource answers`);
    }
    const methods = methodsOf(route);
    for (const [what, other, otherMethods] of seen) {
      const shared = [...methods].filter((m) => otherMethods.has(m));
      if (shared.length > 0 && path.overlaps(other))
        problems.push(`${key}: ${path.text} overlaps ${what} for ${shared.join(', ')}: the same requests would match both`);
    }
    seen.push([`${key.replace(/\.path$/, '')} (${path.text})`, path, methods]);
  }
}

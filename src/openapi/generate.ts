import type { HgErrorCode } from '../lib/errors.ts';
import type { RouteDef } from '../protocol/route.ts';
import type { ParamDoc, RouteDoc } from '../protocol/route-doc.ts';
import type { JsonSchema } from '../protocol/route-doc.ts';
import { optionsHeaders, READ_CONDITIONS, READ_HEADERS, readHeaders, WRITE_BODY_COMMON, WRITE_COMMON, WRITE_HEADERS } from './headers.ts';
import { problemResponses, SHARED_RESPONSES } from './problems.ts';
import { securityOf, securitySchemes, type SecurityInfo } from './security.ts';

/** One parameter as OpenAPI writes it; a comma-separated list says so (style form, not exploded). */
function parameterOf(p: ParamDoc): Record<string, unknown> {
  return {
    name: p.name,
    in: p.in,
    required: p.required,
    description: p.description,
    schema: p.schema,
    ...(p.explode === false ? { style: 'form', explode: false } : {}),
  };
}

/** Problems any authorized route may answer with, besides its own. */
const AUTH_ERRORS: readonly HgErrorCode[] = [
  'HG_ERR_AUTH_INVALID_REQUEST',
  'HG_ERR_AUTH_MISSING',
  'HG_ERR_AUTH_INVALID_TOKEN',
  'HG_ERR_AUTH_INSUFFICIENT_SCOPE',
  'HG_ERR_AUTH_KEYS_UNAVAILABLE',
];
const COMMON_ERRORS: readonly HgErrorCode[] = [
  'HG_ERR_NOT_ACCEPTABLE',
  'HG_ERR_URI_TOO_LONG',
  'HG_ERR_HEADERS_TOO_LARGE',
  'HG_ERR_PAYLOAD_TOO_LARGE',
  'HG_ERR_INTERNAL',
];
/**
 * Every read takes If-Match (RFC 9110 section 13.1.1): one naming no current ETag is a 412, one
 * that is not "*" or a list of entity-tags a 400.
 */
const READ_ERRORS: readonly HgErrorCode[] = ['HG_ERR_PRECONDITION_FAILED', 'HG_ERR_BAD_REQUEST'];

/** find-my-way's /a/:id to OpenAPI's /a/{id}. */
export function openApiPath(routePath: string): string {
  return routePath.replace(/:([A-Za-z0-9_]+)/g, '{$1}');
}

function parameters(params: readonly ParamDoc[]): Record<string, unknown> {
  return params.length > 0 ? { parameters: params.map(parameterOf) } : {};
}

/** A write's operation: its request body, success answers and problems. */
function writeOperation(
  doc: RouteDoc & { write: NonNullable<RouteDoc['write']> },
  errors: readonly HgErrorCode[],
  content: Record<string, unknown>,
  security: Record<string, string[]>[],
): Record<string, unknown> {
  const { write } = doc;
  const answers = Object.fromEntries(
    write.answers.map((a) => [
      String(a.status),
      {
        description: a.description,
        headers: { ...(a.status === 204 ? WRITE_COMMON : WRITE_BODY_COMMON), ...Object.fromEntries(a.headers.map((h) => [h, WRITE_HEADERS[h]])) },
        ...(a.status === 204 ? {} : { content }),
      },
    ]),
  );
  return {
    operationId: doc.operationId,
    summary: doc.summary,
    description: doc.description,
    ...parameters(doc.params),
    ...(write.body === null ? {} : { requestBody: { required: true, content: { [write.body.mediaType]: { schema: write.body.schema } } } }),
    security,
    responses: { ...answers, ...problemResponses(errors, doc.notFound) },
  };
}

/**
 * A pass-through route's operation: the upstream's answer as it is (the `default` response), the
 * gateway's own problems, any request body, and security that a public read makes optional.
 */
function passthroughOperation(
  method: RouteDef['method'],
  doc: RouteDoc & { passthrough: NonNullable<RouteDoc['passthrough']> },
  errors: readonly HgErrorCode[],
  security: Record<string, string[]>[],
): Record<string, unknown> {
  const { passthrough } = doc;
  return {
    operationId: doc.operationId,
    summary: method === 'HEAD' ? `${doc.summary} (headers only)` : doc.summary,
    description: doc.description,
    ...(doc.params.length > 0
      ? { parameters: doc.params.map((p) => ({ name: p.name, in: p.in, required: p.required, description: p.description, schema: p.schema })) }
      : {}),
    ...(passthrough.body
      ? { requestBody: { required: false, description: 'Streamed to the upstream as it arrives.', content: { '*/*': { schema: {} } } } }
      : {}),
    security,
    responses: {
      ...(passthrough.websocket
        ? { '101': { description: 'Switching Protocols: the WebSocket handshake the upstream accepted; the connection is tunnelled from then on.' } }
        : {}),
      // The gateway never answers 406 here: Accept goes to the upstream with the rest.
      ...problemResponses(
        errors.filter((code) => code !== 'HG_ERR_NOT_ACCEPTABLE'),
        doc.notFound,
      ),
      default: { description: doc.ok.description },
    },
  };
}

/** What the gateway's settings add to every authorized operation's answers. */
interface AuthAnswers {
  /** rateLimit is on: 429. */
  readonly rateLimited: boolean;
  /** auth.introspection.url is set: an opaque token's introspection may fail (503). */
  readonly introspection: boolean;
  /** API keys are accepted (auth.apiKeys): each authorized operation takes one instead of a token. */
  readonly apiKeys: boolean;
}

function operation(method: RouteDef['method'], doc: RouteDoc, auth: AuthAnswers): Record<string, unknown> {
  const head = method === 'HEAD';
  const content = Object.fromEntries(Object.entries(doc.ok.content).map(([type, schema]) => [type, { schema: { $ref: `#/components/schemas/${schema}` } }]));
  const authorized = doc.scopes.length > 0;
  const errors = [
    ...doc.errors,
    ...(authorized ? AUTH_ERRORS : []),
    ...(authorized && auth.introspection ? (['HG_ERR_AUTH_INTROSPECTION_UNAVAILABLE'] as const) : []),
    ...(authorized && auth.rateLimited ? (['HG_ERR_RATE_LIMITED'] as const) : []),
    ...COMMON_ERRORS,
  ];
  const security = securityOf(doc, auth.apiKeys);
  if (doc.write !== undefined) return writeOperation({ ...doc, write: doc.write }, errors, content, security);
  if (doc.passthrough !== undefined) return passthroughOperation(method, { ...doc, passthrough: doc.passthrough }, errors, security);
  errors.push(...READ_ERRORS);
  return {
    operationId: head ? `${doc.operationId}Head` : doc.operationId,
    summary: head ? `${doc.summary} (headers only)` : doc.summary,
    description: doc.description,
    ...parameters([...doc.params, ...READ_CONDITIONS]),
    security,
    responses: {
      '200': { description: doc.ok.description, headers: readHeaders(doc.ok.exposedHeaders), ...(head ? {} : { content }) },
      '304': { description: 'Not Modified: If-None-Match matched the current ETag.', headers: READ_HEADERS },
      ...problemResponses(errors, doc.notFound),
    },
  };
}

/** Methods in the order the router's Allow lists them. */
const ALLOW_ORDER: readonly RouteDef['method'][] = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'];

/**
 * OPTIONS on a path (answered by the dispatcher for every route, no token needed): 204 with Allow;
 * a path whose values do not fit its template is a 404 like any method's.
 */
function optionsOperation(path: string, methods: readonly string[], params: readonly ParamDoc[], cors: boolean, operationId: string): Record<string, unknown> {
  return {
    operationId,
    summary: `The methods ${path} takes`,
    description: 'Allow lists the methods of this path (RFC 9110 section 9.3.7); Accept-Post and Accept-Patch what its writes take. No token is needed.',
    ...parameters(params.filter((p) => p.in === 'path')),
    security: [],
    responses: {
      '204': { description: 'The methods this path takes.', headers: optionsHeaders(methods, cors) },
      ...problemResponses(['HG_ERR_ROUTE_NOT_FOUND', 'HG_ERR_URI_TOO_LONG', 'HG_ERR_HEADERS_TOO_LARGE'], undefined),
    },
  };
}

export interface OpenApiInfo extends SecurityInfo {
  readonly title: string;
  readonly version: string;
  /** rateLimit is on: authorized routes may answer 429. */
  readonly rateLimited?: boolean;
  /** cors.origins is set: a preflight answers OPTIONS with the Access-Control-* fields. */
  readonly cors?: boolean;
  /** The component schemas the routes' docs refer to (generated from the resource table). */
  readonly schemas?: Readonly<Record<string, JsonSchema>>;
}

/** The OpenAPI 3.1 document of exactly these routes (the table the router is built from). */
export function generateOpenApi(routes: readonly RouteDef[], info: OpenApiInfo): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  const auth: AuthAnswers = { rateLimited: info.rateLimited === true, introspection: info.introspection === true, apiKeys: info.apiKeys !== undefined };
  // Per path, the doc OPTIONS takes its parameters and name from: the GET's, else the first route's.
  const docs = new Map<string, RouteDoc>();
  for (const route of routes) {
    if (route.doc === undefined) throw new Error(`route ${route.method} ${route.path} has no doc for the OpenAPI document`);
    if (route.method !== 'GET' && route.method !== 'HEAD' && route.doc.write === undefined && route.doc.passthrough === undefined)
      throw new Error(`route ${route.method} ${route.path}: only reads and writes are described (and pass-through routes)`);
    const key = route.doc.passthrough?.path ?? openApiPath(route.path);
    paths[key] ??= {};
    paths[key][route.method.toLowerCase()] = operation(route.method, route.doc, auth);
    if (route.method === 'GET' || !docs.has(key)) docs.set(key, route.doc);
  }
  for (const [key, ops] of Object.entries(paths)) {
    // A pass-through route that takes OPTIONS itself relays it; elsewhere the dispatcher answers it.
    if ('options' in ops) continue;
    const methods = ALLOW_ORDER.filter((m) => m.toLowerCase() in ops);
    const doc = docs.get(key) as RouteDoc;
    ops['options'] = optionsOperation(key, methods, doc.params, info.cors === true, `${doc.operationId}Options`);
  }
  return {
    openapi: '3.1.0',
    info: {
      title: info.title,
      version: info.version,
      description:
        'A stateless hypermedia gateway. Start at GET /api and follow links. A method a path does not take is a 405 with Allow ' +
        '(#/components/responses/MethodNotAllowed); a path no operation has, a 404 (#/components/responses/NotFound).',
    },
    // Relative: the paths are absolute on whatever origin served this document.
    servers: [{ url: '/', description: 'The gateway that served this document.' }],
    paths,
    components: {
      schemas: info.schemas ?? {},
      responses: SHARED_RESPONSES,
      securitySchemes: securitySchemes(info),
    },
  };
}

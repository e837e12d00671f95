import { ERRORS, PROBLEM_TYPE_BASE, type HgErrorCode, type ProblemIdentity } from '../lib/errors.ts';
import type { RouteDef } from '../protocol/route.ts';
import type { ParamDoc, RouteDoc } from '../protocol/route-doc.ts';
import type { JsonSchema } from '../protocol/route-doc.ts';

export const SECURITY_SCHEME = 'bearerAuth';

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

const CHALLENGE_HEADERS = { 'WWW-Authenticate': { description: 'The Bearer challenge (RFC 6750 section 3).', schema: { type: 'string' } } };
const RATE_LIMIT_HEADERS = {
  'Retry-After': { description: 'Whole seconds until the next request is allowed.', schema: { type: 'integer' } },
  'RateLimit-Policy': { description: '"default";q=<burst>;w=<seconds> (draft-ietf-httpapi-ratelimit-headers).', schema: { type: 'string' } },
  RateLimit: { description: '"default";r=0;t=<seconds> (draft-ietf-httpapi-ratelimit-headers).', schema: { type: 'string' } },
};

/** The headers a problem response of these codes carries beyond the usual ones. */
function problemHeaders(codes: readonly HgErrorCode[]): Record<string, unknown> {
  if (codes.includes('HG_ERR_RATE_LIMITED')) return { headers: RATE_LIMIT_HEADERS };
  if (codes.some((c) => c.startsWith('HG_ERR_AUTH_') && c !== 'HG_ERR_AUTH_KEYS_UNAVAILABLE')) return { headers: CHALLENGE_HEADERS };
  return {};
}

/** find-my-way's /a/:id to OpenAPI's /a/{id}. */
export function openApiPath(routePath: string): string {
  return routePath.replace(/:([A-Za-z0-9_]+)/g, '{$1}');
}

/** One response per status; its description and schema list every problem type it may carry. */
function problemResponses(codes: readonly HgErrorCode[], notFound: ProblemIdentity | undefined): Record<string, unknown> {
  const byStatus = new Map<number, HgErrorCode[]>();
  for (const code of codes) {
    const status = ERRORS[code].status;
    const list = byStatus.get(status) ?? [];
    if (!list.includes(code)) list.push(code);
    byStatus.set(status, list);
  }
  // A resource's not-found problem names itself (customer-not-found), not the family's code.
  const identity = (c: HgErrorCode): ProblemIdentity =>
    c === 'HG_ERR_RESOURCE_NOT_FOUND' && notFound !== undefined ? notFound : { slug: ERRORS[c].slug, title: ERRORS[c].title, code: c };
  const out: Record<string, unknown> = {};
  for (const status of [...byStatus.keys()].sort((a, b) => a - b)) {
    const list = (byStatus.get(status) as HgErrorCode[]).map(identity);
    out[String(status)] = {
      description: list.map((p) => `${p.title} (${PROBLEM_TYPE_BASE}${p.slug}, ${p.code})`).join('; '),
      ...problemHeaders(byStatus.get(status) as HgErrorCode[]),
      content: {
        'application/problem+json': {
          schema: {
            allOf: [
              { $ref: '#/components/schemas/Problem' },
              {
                properties: {
                  type: { enum: list.map((p) => `${PROBLEM_TYPE_BASE}${p.slug}`) },
                  code: { enum: list.map((p) => p.code) },
                },
              },
            ],
          },
        },
      },
    };
  }
  return out;
}

const successHeaders = {
  ETag: { description: 'Strong validator of the body (differs per format).', schema: { type: 'string' } },
  'Cache-Control': { description: 'max-age=<seconds> (60 by default), or no-store.', schema: { type: 'string' } },
  Age: { description: 'Seconds since the representation was current (RFC 9111 section 5.1).', schema: { type: 'integer' } },
  Vary: { description: 'Accept (and Origin when CORS is on).', schema: { type: 'string' } },
};

const writeHeaders = {
  Location: { description: "The created item's path (201).", schema: { type: 'string' } },
  ETag: {
    description: 'The validator of the new representation: the ETag a GET of the item in this format answers with; If-Match takes it.',
    schema: { type: 'string' },
  },
  'Content-Location': { description: 'The item the body represents (RFC 9110 section 8.7).', schema: { type: 'string' } },
} as const;

/** A write's operation: its request body, success answers and problems. */
function writeOperation(
  doc: RouteDoc & { write: NonNullable<RouteDoc['write']> },
  errors: readonly HgErrorCode[],
  content: Record<string, unknown>,
): Record<string, unknown> {
  const { write } = doc;
  const answers = Object.fromEntries(
    write.answers.map((a) => [
      String(a.status),
      {
        description: a.description,
        ...(a.headers.length > 0 ? { headers: Object.fromEntries(a.headers.map((h) => [h, writeHeaders[h]])) } : {}),
        ...(a.status === 204 ? {} : { content }),
      },
    ]),
  );
  return {
    operationId: doc.operationId,
    summary: doc.summary,
    description: doc.description,
    ...(doc.params.length > 0 ? { parameters: doc.params.map(parameterOf) } : {}),
    ...(write.body === null ? {} : { requestBody: { required: true, content: { [write.body.mediaType]: { schema: write.body.schema } } } }),
    security: securityOf(doc),
    responses: { ...answers, ...problemResponses(errors, doc.notFound) },
  };
}

/**
 * A pass-through route's operation: the upstream's answer as it is (the `default` response), the
 * gateway's own problems, any request body, and security that a public read makes optional.
 */
function passthroughOperation(method: RouteDef['method'], doc: RouteDoc & { passthrough: NonNullable<RouteDoc['passthrough']> }, errors: readonly HgErrorCode[]): Record<string, unknown> {
  const { passthrough } = doc;
  return {
    operationId: doc.operationId,
    summary: method === 'HEAD' ? `${doc.summary} (headers only)` : doc.summary,
    description: doc.description,
    ...(doc.params.length > 0 ? { parameters: doc.params.map((p) => ({ name: p.name, in: p.in, required: p.required, description: p.description, schema: p.schema })) } : {}),
    ...(passthrough.body ? { requestBody: { required: false, description: 'Streamed to the upstream as it arrives.', content: { '*/*': { schema: {} } } } } : {}),
    security: securityOf(doc),
    responses: {
      ...(passthrough.websocket ? { '101': { description: 'Switching Protocols: the WebSocket handshake the upstream accepted; the connection is tunnelled from then on.' } } : {}),
      // The gateway never answers 406 here: Accept goes to the upstream with the rest.
      ...problemResponses(errors.filter((code) => code !== 'HG_ERR_NOT_ACCEPTABLE'), doc.notFound),
      default: { description: doc.ok.description },
    },
  };
}

/**
 * The operation's security requirements: its scopes under bearer, and for a public read also an
 * empty requirement, which says it may be called without credentials (OpenAPI 3.1 section 4.8.10).
 */
function securityOf(doc: RouteDoc): Record<string, string[]>[] {
  if (doc.scopes.length === 0) return [];
  const bearer = { [SECURITY_SCHEME]: [...doc.scopes] };
  return doc.public === true ? [{}, bearer] : [bearer];
}

function operation(method: RouteDef['method'], doc: RouteDoc, rateLimited: boolean): Record<string, unknown> {
  const head = method === 'HEAD';
  const content = Object.fromEntries(Object.entries(doc.ok.content).map(([type, schema]) => [type, { schema: { $ref: `#/components/schemas/${schema}` } }]));
  const authorized = doc.scopes.length > 0;
  const errors = [
    ...doc.errors,
    ...(authorized ? AUTH_ERRORS : []),
    ...(authorized && rateLimited ? (['HG_ERR_RATE_LIMITED'] as const) : []),
    ...COMMON_ERRORS,
  ];
  if (doc.write !== undefined) return writeOperation({ ...doc, write: doc.write }, errors, content);
  if (doc.passthrough !== undefined) return passthroughOperation(method, { ...doc, passthrough: doc.passthrough }, errors);
  // Every read takes If-Match (RFC 9110 section 13.1.1): one naming no current ETag is a 412.
  errors.push('HG_ERR_PRECONDITION_FAILED');
  return {
    operationId: head ? `${doc.operationId}Head` : doc.operationId,
    summary: head ? `${doc.summary} (headers only)` : doc.summary,
    description: doc.description,
    ...(doc.params.length > 0 ? { parameters: doc.params.map(parameterOf) } : {}),
    security: securityOf(doc),
    responses: {
      '200': { description: doc.ok.description, headers: successHeaders, ...(head ? {} : { content }) },
      '304': { description: 'Not Modified: If-None-Match matched the current ETag.', headers: successHeaders },
      ...problemResponses(errors, doc.notFound),
    },
  };
}

export interface OpenApiInfo {
  readonly title: string;
  readonly version: string;
  readonly requiredScope: string;
  readonly readAnyScope: string;
  /** rateLimit is on: authorized routes may answer 429. */
  readonly rateLimited?: boolean;
  /** The component schemas the routes' docs refer to (generated from the resource table). */
  readonly schemas?: Readonly<Record<string, JsonSchema>>;
}

/** The OpenAPI 3.1 document of exactly these routes (the table the router is built from). */
export function generateOpenApi(routes: readonly RouteDef[], info: OpenApiInfo): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const route of routes) {
    if (route.doc === undefined) throw new Error(`route ${route.method} ${route.path} has no doc for the OpenAPI document`);
    if (route.method !== 'GET' && route.method !== 'HEAD' && route.doc.write === undefined && route.doc.passthrough === undefined) throw new Error(`route ${route.method} ${route.path}: only reads and writes are described (and pass-through routes)`);
    const key = route.doc.passthrough?.path ?? openApiPath(route.path);
    paths[key] ??= {};
    paths[key][route.method.toLowerCase()] = operation(route.method, route.doc, info.rateLimited === true);
  }
  return {
    openapi: '3.1.0',
    info: {
      title: info.title,
      version: info.version,
      description: 'A stateless hypermedia gateway. Start at GET /api and follow links.',
    },
    paths,
    components: {
      schemas: info.schemas ?? {},
      securitySchemes: {
        [SECURITY_SCHEME]: {
          type: 'http',
          scheme: 'bearer',
          bearerFormat: 'JWT',
          description:
            `A JWT in Authorization: Bearer. Scopes (scope or scp claim): each route lists its own ("${info.requiredScope}" by default); ` +
            `"${info.readAnyScope}" lifts a resource's owner rule, and is then needed for a collection whose path lacks the owner parameter.`,
        },
      },
    },
  };
}

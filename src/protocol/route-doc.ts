import type { HgErrorCode, ProblemIdentity } from '../lib/errors.ts';

/** A JSON Schema (draft 2020-12, as OpenAPI 3.1 uses it). */
export type JsonSchema = Readonly<Record<string, unknown>>;

export interface ParamDoc {
  readonly name: string;
  readonly in: 'path' | 'query' | 'header';
  readonly description: string;
  readonly required: boolean;
  readonly schema: JsonSchema;
  /** A list sent as one comma-separated value (OpenAPI `style: form`, `explode: false`); absent: the default. */
  readonly explode?: false;
}

/**
 * What a route promises, read by the OpenAPI generator from the same table the router is built
 * from: so the document lists exactly the routes that answer.
 */
export interface RouteDoc {
  /** Unique per GET route; the HEAD twin gets "Head" appended. */
  readonly operationId: string;
  readonly summary: string;
  readonly description: string;
  readonly params: readonly ParamDoc[];
  /** Scopes the bearer token must all carry; empty for an unauthenticated route. */
  readonly scopes: readonly string[];
  /** A public read: served without credentials too (the scopes then say what a token is checked for). */
  readonly public?: boolean;
  /** The 200 answer: a description, a component schema name per media type, and the upstream's headers it passes on (a service's exposeHeaders) when any. */
  readonly ok: { readonly description: string; readonly content: Readonly<Record<string, string>>; readonly exposedHeaders?: readonly string[] };
  /** Problems particular to this route (auth, 406, 414 and 500 are added for every route). */
  readonly errors: readonly HgErrorCode[];
  /** How HG_ERR_RESOURCE_NOT_FOUND, when listed, names itself on this route (customer-not-found). */
  readonly notFound?: ProblemIdentity;
  /** A write: its request body and success answers (instead of the read's 200 and 304). */
  readonly write?: WriteDoc;
  /** A pass-through route: the upstream's answer, whatever it is (instead of the read's 200 and 304). */
  readonly passthrough?: PassthroughDoc;
}

/** What is particular to a pass-through route's operation. */
export interface PassthroughDoc {
  /** The OpenAPI path (a rest parameter has no spelling in the router's pattern). */
  readonly path: string;
  /** Takes a request body, of any media type, streamed to the upstream. */
  readonly body: boolean;
  /** Tunnels a WebSocket opening handshake. */
  readonly websocket: boolean;
}

/** One success answer of a write. */
export interface WriteAnswerDoc {
  readonly status: 200 | 201 | 204;
  readonly description: string;
  /** Response headers it carries (described by the generator): Location, ETag, Content-Location. */
  readonly headers: readonly ('Location' | 'ETag' | 'Content-Location')[];
}

export interface WriteDoc {
  /** The body's media type and its JSON Schema; null for DELETE. */
  readonly body: { readonly mediaType: string; readonly schema: JsonSchema } | null;
  readonly answers: readonly WriteAnswerDoc[];
}

/**
 * A resource before it is rendered: its own fields (in output order), its links and, for
 * collections, embedded items. The formats (formats.ts) turn one of these into bytes, so the
 * plain-JSON and HAL answers always say the same thing.
 */
export type Link = string | TemplatedLink;

/** A URI template (RFC 6570), e.g. /api/customers/{id}. */
export interface TemplatedLink {
  readonly href: string;
  readonly templated: true;
}

export interface Resource {
  readonly fields: Readonly<Record<string, unknown>>;
  readonly links: Readonly<Record<string, Link>>;
  /** Collection items: `items` in plain JSON, `_embedded[rel]` in HAL. */
  readonly embedded?: { readonly rel: string; readonly items: readonly Resource[] };
}

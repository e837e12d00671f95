/** A write request: its body (sent byte for byte as validated) and the conditions to forward. */
export interface WriteRequest {
  readonly method: 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  readonly body?: Buffer | undefined;
  readonly contentType?: string | undefined;
  /** If-Match as the upstream must see it: its own validators, or "*". */
  readonly ifMatch?: string | undefined;
  /** If-None-Match as the upstream must see it: its own validators, or "*". */
  readonly ifNoneMatch?: string | undefined;
  /** If-Unmodified-Since, an IMF-fixdate: the upstream holds the modification date. */
  readonly ifUnmodifiedSince?: string | undefined;
  readonly idempotencyKey?: string | undefined;
}

import { HgError } from '../lib/errors.ts';

/** Why a part is not in an answer as fresh and present: `Embed-Status` says it per relation path. */
export type PartReason = 'forbidden' | 'not-found' | 'rate-limited' | 'timeout' | 'unavailable' | 'refused';

/**
 * What following the part's link would have answered, in one word (never more than that answer
 * would reveal): a refusal of the caller, an absence, or the upstream's failure.
 */
export function reasonOf(err: HgError): PartReason {
  const status = err.status;
  if (status === 401 || status === 403) return 'forbidden';
  if (status === 404) return 'not-found';
  if (status === 429) return 'rate-limited';
  if (status === 504) return 'timeout';
  if (status >= 500) return 'unavailable';
  return 'refused';
}

/** Is it the upstream's failure (what `onError: "fail"` fails the whole answer for)? */
export function upstreamFailed(err: HgError): boolean {
  return err.status >= 500;
}

/**
 * The `Embed-Status` response header (docs/resources.md "Embedding"): one member per relation
 * path whose parts were left out or served stale, in the order met, e.g.
 * `customer=omitted; reason=forbidden, items.customer=stale`. A path with parts in several states
 * is listed once per state.
 */
export class EmbedStatus {
  readonly #members: string[] = [];

  omitted(path: string, reason: PartReason): void {
    this.#add(`${path}=omitted; reason=${reason}`);
  }

  stale(path: string): void {
    this.#add(`${path}=stale`);
  }

  #add(member: string): void {
    if (!this.#members.includes(member)) this.#members.push(member);
  }

  /** The header's value; '' when every part is fresh and present (then the header is left out). */
  get value(): string {
    return this.#members.join(', ');
  }
}

export function isHgError(err: unknown): err is HgError {
  return err instanceof HgError;
}

import type { IncomingMessage } from 'node:http';
import { HgError } from '../lib/errors.ts';
import { NONE_ACCEPTABLE, Negotiator } from '../protocol/negotiate.ts';
import { FORMATS } from '../hypermedia/formats.ts';

const NOT_ACCEPTABLE_DETAIL = `This resource is available as ${FORMATS.map((f) => f.contentType).join(' or ')}.`;

/** Which of the resource formats (JSON, HAL) a request gets, on its Accept; one per gateway, as its memo is. */
export class FormatNegotiation {
  readonly #negotiator = new Negotiator(FORMATS.map((f) => f.contentType));

  /** Index into FORMATS for this request; 406 when none is acceptable. */
  format(req: IncomingMessage): number {
    const index = this.#negotiator.pick(req.headers.accept);
    if (index === NONE_ACCEPTABLE) throw new HgError('HG_ERR_NOT_ACCEPTABLE', { detail: NOT_ACCEPTABLE_DETAIL });
    return index;
  }
}

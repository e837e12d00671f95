import { HgError } from '../errors.ts';

/** The seed's customer: id, name, status and links, plus fields the operator chose to expose. */
export interface CustomerRepresentation {
  readonly id: number;
  readonly name: string;
  readonly status: string;
  readonly [extra: string]: unknown;
  readonly links: { readonly self: string; readonly orders: string };
}

function invalidRecord(detail: string): HgError {
  return new HgError('HG_ERR_UPSTREAM_BAD_GATEWAY', { detail: `The customer service sent an invalid customer record: ${detail}.` });
}

export function customerPath(id: number): string {
  return `/api/customers/${id}`;
}

/**
 * Turns an upstream record into the representation. Only id, name, status and the listed extra
 * fields pass: anything else the upstream sends stays inside (data exposure is opt-in).
 */
export function renderCustomer(record: unknown, id: number, exposeFields: readonly string[]): CustomerRepresentation {
  if (typeof record !== 'object' || record === null || Array.isArray(record)) throw invalidRecord('not a JSON object');
  const fields = record as Record<string, unknown>;
  const upstreamId = fields['id'];
  if (upstreamId !== id && upstreamId !== String(id)) {
    throw invalidRecord(upstreamId === undefined ? 'id is missing' : 'id does not match the requested customer');
  }
  const name = fields['name'];
  const status = fields['status'];
  if (typeof name !== 'string') throw invalidRecord('name is missing or not a string');
  if (typeof status !== 'string') throw invalidRecord('status is missing or not a string');
  const self = customerPath(id);
  const out: Record<string, unknown> = { id, name, status };
  for (const field of exposeFields) {
    if (Object.hasOwn(fields, field)) out[field] = fields[field];
  }
  out['links'] = { self, orders: `${self}/orders` };
  return out as unknown as CustomerRepresentation;
}

import { HgError } from '../errors.ts';
import { JSON_FORMAT } from '../hypermedia/formats.ts';
import type { Resource } from '../hypermedia/resource.ts';

/** The seed's customer: id, name, status and links, plus fields the operator chose to expose. */
export interface CustomerRepresentation {
  readonly id: number;
  readonly name: string;
  readonly status: string;
  readonly [extra: string]: unknown;
  readonly links: { readonly self: string; readonly orders: string };
}

export function invalidRecord(what: string, detail: string): HgError {
  return new HgError('HG_ERR_UPSTREAM_BAD_GATEWAY', { detail: `The customer service sent an invalid ${what}: ${detail}.` });
}

export function customerPath(id: number): string {
  return `/api/customers/${id}`;
}

export function asRecord(value: unknown, what: string): Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw invalidRecord(what, 'not a JSON object');
  return value as Record<string, unknown>;
}

/** Copies the listed fields the record has, in the listed order (data exposure is opt-in). */
export function copyExposed(out: Record<string, unknown>, record: Record<string, unknown>, exposeFields: readonly string[]): void {
  for (const field of exposeFields) {
    if (Object.hasOwn(record, field)) out[field] = record[field];
  }
}

/**
 * Turns an upstream record into the customer resource. Only id, name, status and the listed
 * extra fields pass: anything else the upstream sends stays inside.
 */
export function customerResource(record: unknown, id: number, exposeFields: readonly string[]): Resource {
  const fields = asRecord(record, 'customer record');
  const upstreamId = fields['id'];
  if (upstreamId !== id && upstreamId !== String(id)) {
    throw invalidRecord('customer record', upstreamId === undefined ? 'id is missing' : 'id does not match the requested customer');
  }
  const name = fields['name'];
  const status = fields['status'];
  if (typeof name !== 'string') throw invalidRecord('customer record', 'name is missing or not a string');
  if (typeof status !== 'string') throw invalidRecord('customer record', 'status is missing or not a string');
  const self = customerPath(id);
  const out: Record<string, unknown> = { id, name, status };
  copyExposed(out, fields, exposeFields);
  return { fields: out, links: { self, orders: `${self}/orders` } };
}

/** The plain-JSON customer (the seed's shape). */
export function renderCustomer(record: unknown, id: number, exposeFields: readonly string[]): CustomerRepresentation {
  return JSON_FORMAT.render(customerResource(record, id, exposeFields)) as CustomerRepresentation;
}

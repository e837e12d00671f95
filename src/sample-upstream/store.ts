import { sampleCustomer } from './data.ts';

/** A customer record as the sample service keeps it, with any JSON fields and its id. */
export type CustomerRecord = Readonly<Record<string, unknown>> & { readonly id: number };

/** One changed customer: its record (null once deleted) and its version. */
interface Changed {
  readonly record: CustomerRecord | null;
  readonly version: number;
}

/** Why a write was refused, as the sample service answers it (an HTTP status and a detail). */
export class SampleRefusal extends Error {
  readonly status: number;
  constructor(status: number, detail: string) {
    super(detail);
    this.status = status;
  }
}

/** Changed customers kept at most: the sample service is a demonstration, not a database. */
const MAX_CHANGED = 10_000;

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The fields a customer must have as the sample service sees them (the gateway checks its own rules first). */
function checkFields(record: Record<string, unknown>): void {
  for (const field of ['name', 'status']) {
    if (typeof record[field] !== 'string') throw new SampleRefusal(422, `${field} must be a string`);
  }
}

/**
 * The sample service's customers: computed from the id (version 1, no memory) until a write
 * changes one; then kept here with a version that goes up with every change. The version is the
 * customer's ETag ("v<version>"), checked against If-Match, so concurrent writes are decided here
 * atomically (412 for the one that comes second).
 */
export class SampleCustomers {
  readonly #count: number;
  readonly #changed = new Map<number, Changed>();
  #nextId: number;

  constructor(count: number) {
    this.#count = count;
    this.#nextId = count + 1;
  }

  /** Ids the collection spans: the computed customers and every one created since. */
  get total(): number {
    return this.#nextId - 1;
  }

  /** The customer and its ETag, or null when there is none (never was, or deleted). */
  get(id: number): { record: CustomerRecord; etag: string } | null {
    const changed = this.#changed.get(id);
    if (changed !== undefined) return changed.record === null ? null : { record: changed.record, etag: etagOf(changed.version) };
    if (id < 1 || id > this.#count) return null;
    return { record: { ...sampleCustomer(id) }, etag: etagOf(1) };
  }

  create(body: unknown): { record: CustomerRecord; etag: string } {
    if (!isObject(body)) throw new SampleRefusal(400, 'the body must be a JSON object');
    checkFields(body);
    this.#room();
    const id = this.#nextId++;
    const record = { ...body, id };
    this.#changed.set(id, { record, version: 1 });
    return { record, etag: etagOf(1) };
  }

  /** PUT (replace) or PATCH (RFC 7396 merge patch) under If-Match (`ifMatch`: the header, or undefined). */
  update(id: number, body: unknown, mode: 'replace' | 'merge', ifMatch: string | undefined): { record: CustomerRecord; etag: string } {
    const current = this.#current(id, ifMatch);
    if (!isObject(body)) throw new SampleRefusal(400, 'the body must be a JSON object');
    const next: Record<string, unknown> = mode === 'replace' ? { ...body } : { ...current.record };
    if (mode === 'merge') {
      for (const [field, value] of Object.entries(body)) {
        if (value === null) delete next[field];
        else next[field] = value;
      }
    }
    next['id'] = id;
    checkFields(next);
    this.#room();
    const version = current.version + 1;
    const record = next as CustomerRecord;
    this.#changed.set(id, { record, version });
    return { record, etag: etagOf(version) };
  }

  delete(id: number, ifMatch: string | undefined): void {
    const current = this.#current(id, ifMatch);
    this.#room();
    this.#changed.set(id, { record: null, version: current.version + 1 });
  }

  /** The customer as it is now, after If-Match (RFC 9110 section 13.1.1): 404 when there is none, 412 when another version is named. */
  #current(id: number, ifMatch: string | undefined): { record: CustomerRecord; version: number } {
    const found = this.get(id);
    if (found === null) throw new SampleRefusal(404, 'no such customer');
    const version = this.#changed.get(id)?.version ?? 1;
    if (ifMatch !== undefined && ifMatch.trim() !== '*' && !ifMatch.split(',').some((tag) => tag.trim() === found.etag)) {
      throw new SampleRefusal(412, 'the customer has changed since that version');
    }
    return { record: found.record, version };
  }

  #room(): void {
    if (this.#changed.size >= MAX_CHANGED) throw new SampleRefusal(507, 'the sample service keeps no more changes');
  }
}

function etagOf(version: number): string {
  return `"v${version}"`;
}

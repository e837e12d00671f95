import type { ResourceConfig } from '../config/types.ts';
import { JsonPointer } from './json-pointer.ts';

/** One entry of `fields`, `exposeFields` or `linkFields`: a record member's name, or a value elsewhere in the record under a name of its own. */
export type FieldEntry = ResourceConfig['fields'][number];

/** The public name of an entry. */
export function fieldName(entry: FieldEntry): string {
  return typeof entry === 'string' ? entry : entry.name;
}

/** The pointer of an entry taken from elsewhere in the record, or null for a member taken by its own name. */
export function fieldPointer(entry: FieldEntry): string | null {
  return typeof entry === 'string' ? null : entry.pointer;
}

/** The public names of a list of entries, in order. */
export function fieldNames(entries: readonly FieldEntry[]): string[] {
  return entries.map(fieldName);
}

/**
 * Where each field taken from a pointer is in the record (public name → pointer), over `fields`,
 * `exposeFields` and `linkFields`; null when every field is a member taken by its own name, so a
 * record is read as before, member by member.
 */
export function fieldPointers(r: Pick<ResourceConfig, 'fields' | 'exposeFields' | 'linkFields'>): ReadonlyMap<string, JsonPointer> | null {
  const out = new Map<string, JsonPointer>();
  for (const entry of [...r.fields, ...r.exposeFields, ...r.linkFields]) {
    if (typeof entry !== 'string') out.set(entry.name, JsonPointer.compile(entry.pointer));
  }
  return out.size === 0 ? null : out;
}

/** A record's value of a field: at its pointer when it has one, else the member of that name; undefined when absent. */
export function fieldValue(record: Readonly<Record<string, unknown>>, name: string, pointers: ReadonlyMap<string, JsonPointer> | null): unknown {
  const pointer = pointers?.get(name);
  if (pointer !== undefined) return pointer.resolve(record);
  return Object.hasOwn(record, name) ? record[name] : undefined;
}

/**
 * The value a dotted link name (`brand.id`, an RFC 6570 varname) names: its first part is a field
 * (fieldValue), each further part a member of the object before it (or an index of an array).
 */
export function dottedValue(record: Readonly<Record<string, unknown>>, path: readonly string[], pointers: ReadonlyMap<string, JsonPointer> | null): unknown {
  let node = fieldValue(record, path[0] as string, pointers);
  for (let i = 1; i < path.length && node !== undefined; i++) {
    const part = path[i] as string;
    if (Array.isArray(node)) node = /^(0|[1-9][0-9]*)$/.test(part) ? (node[Number(part)] as unknown) : undefined;
    else if (typeof node === 'object' && node !== null && Object.hasOwn(node, part)) node = (node as Record<string, unknown>)[part];
    else node = undefined;
  }
  return node;
}

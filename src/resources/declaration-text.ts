import type { ResourceConfig } from '../config/types.ts';

/**
 * A declaration as its renderings depend on it (the ETag suffixes, the shared tier's fingerprint):
 * its JSON, without what it varies with (that changes its cache key, not its rendering), and without the keys added for query parameters and paging styles while they hold their
 * defaults. A declaration that uses none of them keeps the text it had before they existed, so
 * its ETags stay what clients hold and instances of either version share the tier's entries.
 */
export function declarationText(r: ResourceConfig): string {
  const collection = r.collection;
  return JSON.stringify(r, function (this: unknown, key: string, value: unknown) {
    if (this !== r && this !== collection) return value;
    // What the answer varies with changes its cache key, not its rendering: left out, so declaring
    // it changes no ETag and no fingerprint.
    if (this === r && (key === 'vary' || key === 'sharedAcrossIdentities')) return undefined;
    // linkFields only declares what the link templates already read: left out, so declaring it changes no ETag.
    if (this === r && key === 'linkFields') return undefined;
    // Which fields a write may not set changes no rendering: left out, so declaring it changes no ETag.
    if (this === r && key === 'readOnlyFields') return undefined;
    // Embeddable relations change what a request may ask for, never how the resource alone renders.
    if (key === 'embed') return undefined;
    if (key === 'query' && typeof value === 'object' && value !== null && Object.keys(value).length === 0) return undefined;
    if (key === 'paging' && value === null && this === collection) return undefined;
    return value;
  });
}

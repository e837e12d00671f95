/** "customer" → "Customer", "line-items" → "LineItems": names of schemas and operations. */
export function schemaName(word: string): string {
  return word
    .split(/[-_]/)
    .filter((w) => w !== '')
    .map((w) => w.charAt(0).toUpperCase() + w.slice(1))
    .join('');
}

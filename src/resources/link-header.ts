/** The most Link header text read from one answer: a longer header is not looked at past it. */
const MAX_LINK_HEADER = 16 * 1024;

/**
 * The target of the first link with relation `rel` in a `Link` header (RFC 8288 section 3), or
 * null: `<uri>; rel="next"; ...` links separated by commas, where `rel` may list several
 * space-separated relation types, compared case-insensitively (section 2.1.1).
 */
export function linkTarget(header: string | string[] | undefined, rel: string): string | null {
  if (header === undefined) return null;
  const text = (Array.isArray(header) ? header.join(', ') : header).slice(0, MAX_LINK_HEADER);
  let at = 0;
  while (at < text.length) {
    const open = text.indexOf('<', at);
    if (open === -1) return null;
    const close = text.indexOf('>', open);
    if (close === -1) return null;
    const target = text.slice(open + 1, close);
    // The link's parameters run to the next comma outside a quoted string.
    let end = close + 1;
    let quoted = false;
    for (; end < text.length; end++) {
      const c = text[end];
      if (c === '"') quoted = !quoted;
      else if (c === '\\' && quoted) end++;
      else if (c === ',' && !quoted) break;
    }
    if (relsOf(text.slice(close + 1, end)).includes(rel)) return target;
    at = end + 1;
  }
  return null;
}

/** The relation types of one link's parameters (`; rel="next prev"` or `; rel=next`), lower case. */
function relsOf(params: string): string[] {
  const match = /;\s*rel\s*=\s*(?:"([^"]*)"|([^\s;,"]+))/i.exec(params);
  if (match === null) return [];
  return (match[1] ?? match[2] ?? '')
    .toLowerCase()
    .split(/\s+/)
    .filter((r) => r !== '');
}

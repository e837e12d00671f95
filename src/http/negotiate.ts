/**
 * Does an Accept header admit application/json? RFC 9110 section 12.5.1: the most specific
 * matching media range decides, and q=0 means "not acceptable".
 * Answers are memoised per header value: clients send the same few Accept strings over and over.
 */
const MEMO_LIMIT = 512;
const memo = new Map<string, boolean>();

function qualityOf(params: readonly string[]): number {
  for (const param of params) {
    const eq = param.indexOf('=');
    if (eq === -1) continue;
    if (param.slice(0, eq).trim().toLowerCase() !== 'q') continue;
    const q = Number(param.slice(eq + 1).trim());
    return Number.isFinite(q) && q >= 0 && q <= 1 ? q : 0;
  }
  return 1;
}

function parseAcceptsJson(header: string): boolean {
  // Specificity: 3 = application/json, 2 = application/*, 1 = */*, 0 = no match.
  let bestSpecificity = 0;
  let bestQuality = 0;
  for (const part of header.split(',')) {
    const [range = '', ...params] = part.split(';');
    const type = range.trim().toLowerCase();
    let specificity = 0;
    if (type === 'application/json') specificity = 3;
    else if (type === 'application/*') specificity = 2;
    else if (type === '*/*') specificity = 1;
    if (specificity === 0) continue;
    const q = qualityOf(params);
    if (specificity > bestSpecificity || (specificity === bestSpecificity && q > bestQuality)) {
      bestSpecificity = specificity;
      bestQuality = q;
    }
  }
  return bestSpecificity > 0 && bestQuality > 0;
}

export function acceptsJson(header: string | undefined): boolean {
  if (header === undefined || header === '' || header === 'application/json' || header === '*/*') return true;
  const known = memo.get(header);
  if (known !== undefined) return known;
  const answer = parseAcceptsJson(header);
  if (memo.size >= MEMO_LIMIT) memo.clear();
  memo.set(header, answer);
  return answer;
}

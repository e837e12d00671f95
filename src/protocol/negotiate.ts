/**
 * Proactive content negotiation on Accept (RFC 9110 section 12.5.1): for each media type we offer,
 * the most specific matching media range in Accept gives its quality; the highest quality wins,
 * ties go to the order of our offer, and q=0 means "not acceptable".
 * Answers are memoised per header value: clients send the same few Accept strings over and over.
 */
const MEMO_LIMIT = 512;

/** Returned by Negotiator.pick when nothing offered is acceptable (406). */
export const NONE_ACCEPTABLE = -1;

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

interface Range {
  readonly type: string;
  readonly subtype: string;
  readonly q: number;
}

function parseAccept(header: string): Range[] {
  const ranges: Range[] = [];
  for (const part of header.split(',')) {
    const [range = '', ...params] = part.split(';');
    const text = range.trim().toLowerCase();
    const slash = text.indexOf('/');
    if (slash <= 0 || slash === text.length - 1) continue;
    ranges.push({ type: text.slice(0, slash), subtype: text.slice(slash + 1), q: qualityOf(params) });
  }
  return ranges;
}

/** Quality of one offered type: 3 = exact range, 2 = type/*, 1 = *\/*; the most specific decides. */
function qualityFor(offered: string, ranges: readonly Range[]): number {
  const slash = offered.indexOf('/');
  const type = offered.slice(0, slash);
  const subtype = offered.slice(slash + 1);
  let bestSpecificity = 0;
  let bestQuality = 0;
  for (const range of ranges) {
    let specificity = 0;
    if (range.type === type && range.subtype === subtype) specificity = 3;
    else if (range.type === type && range.subtype === '*') specificity = 2;
    else if (range.type === '*' && range.subtype === '*') specificity = 1;
    if (specificity === 0) continue;
    if (specificity > bestSpecificity || (specificity === bestSpecificity && range.q > bestQuality)) {
      bestSpecificity = specificity;
      bestQuality = range.q;
    }
  }
  return bestSpecificity === 0 ? 0 : bestQuality;
}

/** Picks the best of a fixed list of offered media types (lower case, server preference first). */
export class Negotiator {
  readonly offered: readonly string[];
  readonly #memo = new Map<string, number>();
  readonly #jsonIndex: number;

  constructor(offered: readonly string[]) {
    if (offered.length === 0) throw new Error('Negotiator: offer at least one media type');
    this.offered = offered.map((t) => t.toLowerCase());
    this.#jsonIndex = this.offered.indexOf('application/json');
  }

  /**
   * Index into `offered` of the best acceptable type, or NONE_ACCEPTABLE. The common headers
   * (none, application/json, *\/*) are answered without parsing or a map lookup.
   */
  pick(header: string | undefined): number {
    if (header === undefined || header === '' || header === '*/*') return 0;
    if (header === 'application/json' && this.#jsonIndex !== -1) return this.#jsonIndex;
    const known = this.#memo.get(header);
    if (known !== undefined) return known;
    const answer = this.#compute(header);
    if (this.#memo.size >= MEMO_LIMIT) this.#memo.clear();
    this.#memo.set(header, answer);
    return answer;
  }

  #compute(header: string): number {
    const ranges = parseAccept(header);
    let best = NONE_ACCEPTABLE;
    let bestQuality = 0;
    for (let i = 0; i < this.offered.length; i++) {
      const q = qualityFor(this.offered[i] as string, ranges);
      if (q > bestQuality) {
        best = i;
        bestQuality = q;
      }
    }
    return best;
  }
}

const jsonOnly = new Negotiator(['application/json']);

/** Does an Accept header admit application/json? (The single-format case of Negotiator.) */
export function acceptsJson(header: string | undefined): boolean {
  return jsonOnly.pick(header) !== NONE_ACCEPTABLE;
}

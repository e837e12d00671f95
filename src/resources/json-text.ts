/**
 * What JSON.parse takes that a write's body must not carry, found in one pass over its text:
 *
 * - nesting deeper than a bound: JSON.parse reads any depth, but the upstream's parser, or any
 *   recursive walk of the value, may overflow its stack (a 30,000-deep body crashed an upstream);
 * - a member name given twice in one object: JSON.parse keeps the last of them; an upstream's
 *   parser may keep the first, or refuse the body. Our checks (fields, owner, schema) would then pass
 *   one value while the upstream applies another (I-JSON, RFC 7493 section 2.3: names within an
 *   object MUST be unique). Names are compared decoded, so `"a"` and `"\u0061"` are the same name;
 * - a string holding a lone surrogate (`"\ud800"`, only possible as an escape: the body's UTF-8 is
 *   decoded strictly): it names no Unicode character, cannot be written in UTF-8, and an upstream
 *   turns it into U+FFFD or refuses it (RFC 7493 section 2.1; RFC 8259 section 8.2 leaves it
 *   unpredictable).
 *
 * `text` must already be valid JSON (JSON.parse accepted it): the scan only follows its structure.
 */

/** One thing the text must not carry, with the JSON Pointer (RFC 6901) of where it is. */
export interface JsonTextProblem {
  readonly kind: 'depth' | 'duplicate' | 'surrogate';
  /** depth: the first array or object past the bound; duplicate: the repeated member; surrogate: the string value, or the object whose member name holds one. */
  readonly pointer: string;
}

interface Frame {
  /** The JSON Pointer (RFC 6901) of this object or array. */
  readonly pointer: string;
  /** Member names seen so far; null for an array. */
  readonly names: Set<string> | null;
  /** An object: the next string is a member name. */
  expectName: boolean;
  /** An object: the last member name; an array: the index of the current element. */
  lastName: string;
  index: number;
}

/** RFC 6901 escaping of one member name as a pointer's reference token. */
export function pointerToken(name: string): string {
  return name.replaceAll('~', '~0').replaceAll('/', '~1');
}

function childPointer(frame: Frame | undefined): string {
  if (frame === undefined) return '';
  return `${frame.pointer}/${frame.names === null ? String(frame.index) : pointerToken(frame.lastName)}`;
}

/** The end of the string that opens at `start` (its closing quote's index). */
function stringEnd(text: string, start: number): number {
  let i = start + 1;
  while (text.charCodeAt(i) !== 0x22) i += text.charCodeAt(i) === 0x5c ? 2 : 1;
  return i;
}

/** The UTF-16 code unit a `\uXXXX` escape at `i` (its backslash) stands for, or -1 when the escape at `i` is another. */
function escapedUnit(text: string, i: number): number {
  return text.charCodeAt(i + 1) === 0x75 /* u */ ? Number.parseInt(text.slice(i + 2, i + 6), 16) : -1;
}

const isHigh = (unit: number): boolean => unit >= 0xd800 && unit <= 0xdbff;
const isLow = (unit: number): boolean => unit >= 0xdc00 && unit <= 0xdfff;

/** Does the string between the quotes at `start` and `end` escape a surrogate that is not half of a pair? */
function hasLoneSurrogate(text: string, start: number, end: number): boolean {
  for (let i = start + 1; i < end; i++) {
    if (text.charCodeAt(i) !== 0x5c /* \ */) continue;
    const unit = escapedUnit(text, i);
    if (unit === -1) {
      i++;
      continue;
    }
    if (isLow(unit)) return true;
    if (isHigh(unit)) {
      if (text.charCodeAt(i + 6) !== 0x5c || !isLow(escapedUnit(text, i + 6))) return true;
      i += 6;
    }
    i += 5;
  }
  return false;
}

/** The scan itself; `surrogates` false leaves strings unread (duplicateMember). */
function scan(text: string, maxDepth: number, surrogates: boolean): JsonTextProblem | null {
  const stack: Frame[] = [];
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    const top = stack[stack.length - 1];
    if (c === 0x7b /* { */ || c === 0x5b /* [ */) {
      const pointer = childPointer(top);
      if (stack.length === maxDepth) return { kind: 'depth', pointer };
      stack.push({ pointer, names: c === 0x7b ? new Set() : null, expectName: c === 0x7b, lastName: '', index: 0 });
    } else if (c === 0x7d /* } */ || c === 0x5d /* ] */) {
      stack.pop();
    } else if (c === 0x2c /* , */) {
      if (top === undefined) continue;
      if (top.names === null) top.index++;
      else top.expectName = true;
    } else if (c === 0x22 /* " */) {
      const end = stringEnd(text, i);
      const name = top !== undefined && top.names !== null && top.expectName;
      if (surrogates && hasLoneSurrogate(text, i, end)) return { kind: 'surrogate', pointer: name ? top.pointer : childPointer(top) };
      if (name) {
        const raw = text.slice(i + 1, end);
        const decoded = raw.includes('\\') ? (JSON.parse(`"${raw}"`) as string) : raw;
        top.lastName = decoded;
        if (top.names?.has(decoded) === true) return { kind: 'duplicate', pointer: childPointer(top) };
        top.names?.add(decoded);
        top.expectName = false;
      }
      i = end;
    }
  }
  return null;
}

/** The first thing, in text order, that `text` must not carry, with at most `maxDepth` levels of nesting; null when there is none. */
export function jsonTextProblem(text: string, maxDepth: number): JsonTextProblem | null {
  return scan(text, maxDepth, true);
}

/** The pointer of the first member whose name its object already had, or null when there is none. */
export function duplicateMember(text: string): string | null {
  return scan(text, Number.POSITIVE_INFINITY, false)?.pointer ?? null;
}

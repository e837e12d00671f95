/**
 * Finds a member name given twice in one JSON object, at any depth. JSON.parse keeps the last of
 * them; an upstream's parser may keep the first, or refuse the body. Our checks (fields, owner,
 * schema) would then pass one value while the upstream applies another, so such a body is refused
 * (I-JSON, RFC 7493 section 2.3: names within an object MUST be unique).
 *
 * `text` must already be valid JSON (JSON.parse accepted it): the scan only follows its structure.
 * Names are compared decoded, so `"a"` and `"\u0061"` are the same name.
 */

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

/** The pointer of the first member whose name its object already had, or null when there is none. */
export function duplicateMember(text: string): string | null {
  const stack: Frame[] = [];
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    const top = stack[stack.length - 1];
    if (c === 0x7b /* { */ || c === 0x5b /* [ */) {
      stack.push({ pointer: childPointer(top), names: c === 0x7b ? new Set() : null, expectName: c === 0x7b, lastName: '', index: 0 });
    } else if (c === 0x7d /* } */ || c === 0x5d /* ] */) {
      stack.pop();
    } else if (c === 0x2c /* , */) {
      if (top === undefined) continue;
      if (top.names === null) top.index++;
      else top.expectName = true;
    } else if (c === 0x22 /* " */) {
      const end = stringEnd(text, i);
      if (top !== undefined && top.names !== null && top.expectName) {
        const raw = text.slice(i + 1, end);
        const name = raw.includes('\\') ? (JSON.parse(`"${raw}"`) as string) : raw;
        top.lastName = name;
        if (top.names.has(name)) return childPointer(top);
        top.names.add(name);
        top.expectName = false;
      }
      i = end;
    }
  }
  return null;
}

/**
 * JSON Pointer (RFC 6901), compiled once: "" is the whole document, "/data/0" the first element of
 * the member "data". Reference tokens unescape ~1 to "/" and ~0 to "~" (section 4).
 */
export class JsonPointer {
  readonly text: string;
  readonly #tokens: readonly string[];

  private constructor(text: string, tokens: readonly string[]) {
    this.text = text;
    this.#tokens = tokens;
  }

  /** Why `text` is not a JSON pointer, or null when it is. */
  static problem(text: string): string | null {
    if (text !== '' && !text.startsWith('/')) return 'a JSON pointer is "" or starts with "/" (RFC 6901)';
    if (/~[^01]|~$/.test(text)) return 'in a JSON pointer "~" is followed by 0 or 1 (RFC 6901 section 3)';
    return null;
  }

  static compile(text: string): JsonPointer {
    const problem = JsonPointer.problem(text);
    if (problem !== null) throw new Error(`${JSON.stringify(text)}: ${problem}`);
    const tokens =
      text === ''
        ? []
        : text
            .slice(1)
            .split('/')
            .map((t) => t.replaceAll('~1', '/').replaceAll('~0', '~'));
    return new JsonPointer(text, tokens);
  }

  /** The value the pointer names in `doc`, or undefined when there is none (section 4: an error we report ourselves). */
  resolve(doc: unknown): unknown {
    let node = doc;
    for (const token of this.#tokens) {
      if (Array.isArray(node)) {
        // Array indices are "0" or digits without a leading zero (section 4).
        if (!/^(0|[1-9][0-9]*)$/.test(token)) return undefined;
        node = node[Number(token)];
      } else if (typeof node === 'object' && node !== null && Object.hasOwn(node, token)) {
        node = (node as Record<string, unknown>)[token];
      } else {
        return undefined;
      }
    }
    return node;
  }
}

/**
 * Writing a JSON line straight into a byte buffer, for the access log: numbers as digits, ASCII
 * text char by char, constant pieces as prepared bytes. Nothing is allocated per line, where a
 * line built as a string makes a dozen intermediate strings that node then has to flatten and
 * copy again (bench/RESULTS.md, "access log"). Every function returns the position after what it wrote;
 * the caller makes sure there is room (see `jsonStringBound`).
 */

/** Bytes of a constant ASCII piece, prepared once. */
export function bytesOf(text: string): Uint8Array {
  return Buffer.from(text, 'latin1');
}

export function putBytes(buf: Uint8Array, pos: number, bytes: Uint8Array): number {
  // One memmove: on `hot` 1.4% more throughput than a byte loop (bench/RESULTS.md).
  buf.set(bytes, pos);
  return pos + bytes.length;
}

/** Text known to need no escaping and to be ASCII (our own words, validated tokens). */
export function putAscii(buf: Uint8Array, pos: number, text: string): number {
  for (let i = 0; i < text.length; i++) buf[pos + i] = text.charCodeAt(i);
  return pos + text.length;
}

/** Most bytes `putJsonString` can write for `text`: `\u00XX` (6) per UTF-16 unit, and the quotes. */
export function jsonStringBound(text: string): number {
  return 6 * text.length + 2;
}

/**
 * `text` as a JSON string, quotes included. Printable ASCII without `"` or `\` (nearly every path
 * and subject) is copied as it is; anything else goes through JSON.stringify and UTF-8, exactly as
 * pino would write it.
 */
export function putJsonString(buf: Buffer, pos: number, text: string): number {
  return putJsonSlice(buf, pos, text, 0, text.length);
}

/** `text.slice(from, to)` as putJsonString writes it, without making the slice (it is made only to escape it). */
export function putJsonSlice(buf: Buffer, pos: number, text: string, from: number, to: number): number {
  buf[pos] = 0x22;
  const start = pos + 1 - from;
  for (let i = from; i < to; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x20 || c > 0x7e || c === 0x22 || c === 0x5c) return pos + buf.write(JSON.stringify(text.slice(from, to)), pos, 'utf8');
    buf[start + i] = c;
  }
  buf[start + to] = 0x22;
  return start + to + 1;
}

/** A non-negative integer below 2^53, in decimal. */
export function putUint(buf: Uint8Array, pos: number, n: number): number {
  if (n < 0x80000000) return putSmallUint(buf, pos, n);
  let digits = 1;
  for (let rest = Math.floor(n / 10); rest > 0; rest = Math.floor(rest / 10)) digits++;
  let rest = n;
  for (let i = pos + digits - 1; i >= pos; i--) {
    const next = Math.floor(rest / 10);
    buf[i] = 0x30 + (rest - next * 10);
    rest = next;
  }
  return pos + digits;
}

/** putUint for n < 2^31, in integer arithmetic (the general case divides doubles). */
function putSmallUint(buf: Uint8Array, pos: number, n: number): number {
  let digits = 1;
  for (let rest = (n / 10) | 0; rest > 0; rest = (rest / 10) | 0) digits++;
  let rest = n | 0;
  for (let i = pos + digits - 1; i >= pos; i--) {
    const next = (rest / 10) | 0;
    buf[i] = 0x30 + rest - next * 10;
    rest = next;
  }
  return pos + digits;
}

/** A duration in ms with exactly three decimals (`0.250`), rounded to the microsecond. Never negative. */
export function putMillis(buf: Uint8Array, pos: number, ms: number): number {
  const us = Math.round(ms * 1000);
  const frac = us % 1000;
  let at = putUint(buf, pos, (us - frac) / 1000);
  buf[at++] = 0x2e;
  buf[at++] = 0x30 + Math.floor(frac / 100);
  buf[at++] = 0x30 + (Math.floor(frac / 10) % 10);
  buf[at++] = 0x30 + (frac % 10);
  return at;
}

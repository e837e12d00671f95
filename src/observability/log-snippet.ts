/** The most bytes of an upstream's own body a log line shows. */
export const SNIPPET_BYTES = 512;

const REDACTED = '[redacted]';
/** A JWS or JWE in compact form (its header is base64url JSON: `{"` is `eyJ`), whole or cut short. */
const COMPACT_TOKEN = /eyJ[A-Za-z0-9_-]*\.[A-Za-z0-9_-]*(?:\.[A-Za-z0-9_-]*)*/g;
/** Credentials after an HTTP authentication scheme (RFC 9110 section 11.4). */
const CREDENTIALS = /\b(Bearer|Basic|Digest|Negotiate|Token)(\s+)[A-Za-z0-9._~+/=-]+/gi;
/** C0 and C1 controls, DEL, and the JavaScript line separators: shown as \uXXXX escapes. */
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/g;

const escape = (c: string): string => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`;

/** `text` without the longest start of `secret` it ends with. */
function withoutTrailingPrefix(text: string, secret: string): string {
  for (let n = Math.min(secret.length - 1, text.length); n > 0; n--) if (text.endsWith(secret.slice(0, n))) return text.slice(0, -n);
  return text;
}

/**
 * A failed upstream answer's own body as its log line shows it: at most SNIPPET_BYTES of UTF-8,
 * after `secrets` (the service's configured header values), token-shaped strings and credentials
 * after an authentication scheme are replaced by "[redacted]", and control characters escaped, so
 * the line stays one readable line and holds no secret an upstream echoed back. `totalBytes` is
 * the size of the whole body; when more than the snippet, the snippet says so.
 */
export function logSnippet(sample: Buffer, totalBytes: number, secrets: readonly string[]): string {
  let text = sample.toString('utf8');
  for (const secret of secrets) if (secret !== '') text = text.replaceAll(secret, REDACTED);
  // A sample cut short may end in the first part of a secret: that part goes too.
  if (totalBytes > sample.length) for (const secret of secrets) text = withoutTrailingPrefix(text, secret);
  text = text.replace(COMPACT_TOKEN, REDACTED).replace(CREDENTIALS, `$1$2${REDACTED}`).replace(CONTROL, escape);
  const bytes = Buffer.from(text, 'utf8');
  if (bytes.length <= SNIPPET_BYTES && totalBytes <= sample.length) return text;
  // Cut at a character boundary (a partial one decodes as U+FFFD) and never inside an escape.
  const cut = bytes
    .subarray(0, SNIPPET_BYTES)
    .toString('utf8')
    .replace(/\uFFFD$/, '')
    .replace(/\\u[0-9a-f]{0,3}$|\\$/, '');
  return `${cut}… (${totalBytes} bytes in all)`;
}

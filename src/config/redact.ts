const HIDDEN = '***';

/**
 * A URL as it may be printed (errors, logs, --check-config): its user name and password, when it
 * has them, become `***` (RFC 3986 section 3.2.1: the userinfo is credentials, and section 7.5 says
 * not to show them). A string that is not a valid URL loses everything between `://` (or its
 * start) and its last `@`, so a malformed URL with a password cannot leak through the error about it.
 */
export function redactUrl(value: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    const at = value.lastIndexOf('@');
    if (at === -1) return value;
    const scheme = value.indexOf('://');
    const start = scheme !== -1 && scheme < at ? scheme + 3 : 0;
    return `${value.slice(0, start)}${HIDDEN}${value.slice(at)}`;
  }
  if (url.username === '' && url.password === '') return value;
  if (url.username !== '') url.username = HIDDEN;
  if (url.password !== '') url.password = HIDDEN;
  return url.href;
}

/**
 * A URL fit for a log line, an error or /metrics: the password (and user name) replaced by `***`,
 * so a `redis://user:secret@host` never leaks its credentials. Anything that does not parse as a
 * URL loses everything up to its last `@` (where credentials would be) instead.
 */
export function redactUrl(url: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    const at = url.lastIndexOf('@');
    return at === -1 ? url : `***${url.slice(at)}`;
  }
  if (parsed.username === '' && parsed.password === '') return parsed.href;
  if (parsed.username !== '') parsed.username = '***';
  if (parsed.password !== '') parsed.password = '***';
  return parsed.href;
}

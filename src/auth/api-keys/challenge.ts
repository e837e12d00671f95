import { HgError } from '../../lib/errors.ts';

/** The ApiKey challenge (RFC 9110 section 11.6.1), naming the header that carries the key when it is not Authorization. */
export function apiKeyChallenge(header: string | null): string {
  return header === null ? 'ApiKey realm="hypergate"' : `ApiKey realm="hypergate", header="${header}"`;
}

/**
 * A 401 of a route that also takes API keys: its WWW-Authenticate names both schemes (RFC 9110
 * section 11.6.1 allows several challenges in one field). Anything else stands as it is.
 */
export function withApiKeyChallenge(err: unknown, challenge: string): unknown {
  if (!(err instanceof HgError) || err.status !== 401) return err;
  const bearer = err.headers?.['WWW-Authenticate'];
  if (bearer === undefined || bearer.includes('ApiKey ')) return err;
  return new HgError(err.code, { detail: err.detail, headers: { ...err.headers, 'WWW-Authenticate': `${bearer}, ${challenge}` }, cause: err.cause });
}

/** A key that is malformed (checked before any lookup), unknown, revoked or past its rotation's overlap: 401. */
export function invalidApiKey(description: string, challenge: string): HgError {
  return new HgError('HG_ERR_AUTH_INVALID_TOKEN', {
    detail: `The API key was rejected: ${description}.`,
    headers: { 'WWW-Authenticate': `${challenge}, error="invalid_token", error_description="${description}", Bearer realm="hypergate"` },
  });
}

/** The key store (Redis) could not answer for a key not known here: ours, not the client's (503, never 401). */
export function apiKeysUnavailable(cause: unknown): HgError {
  return new HgError('HG_ERR_AUTH_KEYS_UNAVAILABLE', {
    detail: 'The API key could not be looked up; try again shortly.',
    headers: { 'Retry-After': '1' },
    cause,
  });
}

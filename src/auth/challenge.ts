import { HgError } from '../lib/errors.ts';

/** RFC 6750 section 3: every 401/403 carries a WWW-Authenticate challenge for the Bearer scheme. */
const REALM = 'Bearer realm="hypergate"';

function quoted(value: string): string {
  // error_description is limited to %x20-21 / %x23-5B / %x5D-7E (RFC 6750 section 3).
  return value.replace(/[^\x20-\x21\x23-\x5b\x5d-\x7e]/g, '');
}

/** No credentials, or credentials of another scheme: no error code (RFC 6750 section 3.1). */
export function missingCredentials(detail?: string): HgError {
  return new HgError('HG_ERR_AUTH_MISSING', { detail, headers: { 'WWW-Authenticate': REALM } });
}

export function invalidRequest(description: string): HgError {
  return new HgError('HG_ERR_AUTH_INVALID_REQUEST', {
    detail: `The Authorization header is malformed: ${description}.`,
    headers: { 'WWW-Authenticate': `${REALM}, error="invalid_request", error_description="${quoted(description)}"` },
  });
}

export function invalidToken(description: string, cause?: unknown): HgError {
  return new HgError('HG_ERR_AUTH_INVALID_TOKEN', {
    detail: `The bearer token was rejected: ${description}.`,
    headers: { 'WWW-Authenticate': `${REALM}, error="invalid_token", error_description="${quoted(description)}"` },
    cause,
  });
}

export function insufficientScope(scope: string): HgError {
  return new HgError('HG_ERR_AUTH_INSUFFICIENT_SCOPE', {
    detail: `This resource requires the scope "${scope}".`,
    headers: { 'WWW-Authenticate': `${REALM}, error="insufficient_scope", scope="${quoted(scope)}"` },
  });
}

/**
 * The token is bound to another owner (the resource's owner rule: "its own customer", `noun`) and
 * lacks the scope that lifts the binding. Same challenge as insufficient_scope, since that scope is what would help.
 */
export function notOwner(readAnyScope: string, noun: string): HgError {
  return new HgError('HG_ERR_NOT_OWNER', {
    detail: `This token may read only its own ${noun}.`,
    headers: { 'WWW-Authenticate': `${REALM}, error="insufficient_scope", scope="${quoted(readAnyScope)}"` },
  });
}

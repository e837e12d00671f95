import { errors } from 'jose';
import { HgError } from '../lib/errors.ts';
import type { TokenTally } from '../observability/metrics.ts';
import { invalidToken } from './challenge.ts';
import { KeysUnavailableError } from './remote-keys.ts';

/** What jose's refusal of a token means, as the invalid_token challenge's description says it (by error class, never by message). */
function describeJoseFailure(err: unknown): string {
  if (err instanceof errors.JWTExpired) return 'the token has expired';
  if (err instanceof errors.JWTClaimValidationFailed) {
    if (err.claim === 'nbf') return 'the token is not yet valid';
    if (err.claim === 'iss') return 'unexpected issuer';
    if (err.claim === 'aud') return 'unexpected audience';
    if (err.claim === 'exp') return 'the token has no valid exp claim';
    return `invalid ${err.claim} claim`;
  }
  if (err instanceof errors.JWSSignatureVerificationFailed) return 'signature verification failed';
  if (err instanceof errors.JOSEAlgNotAllowed) return 'the signing algorithm is not allowed';
  if (err instanceof errors.JWKSNoMatchingKey) return 'no key matches the token';
  if (err instanceof errors.JWKSMultipleMatchingKeys) return 'more than one key matches the token';
  if (err instanceof errors.JWSInvalid || err instanceof errors.JWTInvalid) return 'the token is malformed';
  if (err instanceof errors.JOSENotSupported) return 'the token uses an unsupported feature';
  return 'the token could not be verified';
}

/**
 * A failed verification as the error the client gets, counted in `tally`: the key server's
 * failure (no key set, or the fetch this token waited for failed) is ours, a 503 with
 * Retry-After; anything else is the token's, a 401 invalid_token (or our own typed error as it is).
 */
export function verificationError(err: unknown, tally: TokenTally): HgError {
  if (err instanceof KeysUnavailableError) {
    tally.keysUnavailable++;
    return new HgError('HG_ERR_AUTH_KEYS_UNAVAILABLE', { headers: { 'Retry-After': String(err.retryAfterSeconds) }, cause: err });
  }
  tally.rejected++;
  if (err instanceof HgError) return err;
  return invalidToken(describeJoseFailure(err), err);
}

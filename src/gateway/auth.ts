import { ClaimTable } from '../auth/claims.ts';
import { Introspector } from '../auth/introspection.ts';
import { KeySourceError, resolveKeySource, type KeySource } from '../auth/keys.ts';
import { checkedScopes } from '../auth/scopes.ts';
import { TokenVerifier } from '../auth/verifier.ts';
import type { Clock } from '../lib/clock.ts';
import { sameValue } from '../lib/same-value.ts';
import type { Config } from '../config/types.ts';
import type { Logger } from '../observability/logger.ts';
import { countingIntrospectionObserver, type IntrospectionObserver, type JwksTally, type TokenTally } from '../observability/metrics.ts';

/** Verified tokens keep the same claims, cut at the same length. */
const sameClaims = (a: ClaimTable, b: ClaimTable): boolean => sameValue(a.names, b.names) && sameValue(a.maxChars, b.maxChars);

/** What the keys and verifier of a pipeline were built from: the previous pipeline's, on reload. */
export interface AuthBefore {
  readonly config: Config;
  readonly keySource: KeySource;
  readonly verifier: TokenVerifier;
}

/** What keys and verifiers report to: the gateway's clock, log and metrics (or the cluster primary's own). */
export interface AuthDeps {
  readonly clock: Clock;
  readonly logger: Logger;
  readonly tokens: TokenTally;
  readonly jwks: JwksTally;
  /** Where introspection calls are counted and timed (auth.introspection); none given: counted, not timed. */
  readonly introspection?: IntrospectionObserver;
  /** Where the introspection client credentials' variables are read; process.env when not given. */
  readonly env?: NodeJS.ProcessEnv;
}

export interface AuthParts {
  readonly keySource: KeySource;
  readonly verifier: TokenVerifier;
  /** The claims verified tokens keep (owner rules, forwardClaims): services and resources index into it. */
  readonly claims: ClaimTable;
  /** Null when the keys are as fetched now; else why the keys in use were kept (the JWKS failed on reload). */
  readonly keysKept: string | null;
}

/**
 * The key source and verifier for `config`. At start-up a JWKS that cannot be fetched leaves the
 * gateway without keys (tokens get 503, /readyz says why, fetches retry once per cooldown). On
 * reload, the JWKS is fetched again and a failure never swaps working keys for none:
 * - same auth settings: the key source and the verifier are kept, with their verified tokens;
 * - same JWKS URL, other auth settings: the last good key set is carried into the new key source,
 *   and tokens are verified again under the new settings;
 * - another JWKS URL: the reload is refused (the running config stays), since keys of the old
 *   URL are not what the new config asks for;
 * - a local key source (key file, secret, dev key) is read again, and with the same settings and
 *   the same keys as before the verifier is kept with its tokens.
 * After a successful fetch the verifier (and its tokens) is kept only when neither the settings
 * nor the keys changed: a token signed by a withdrawn key must not stay accepted.
 */
export async function buildAuth(config: Config, previous: AuthBefore | null, deps: AuthDeps): Promise<AuthParts> {
  const { clock, logger } = deps;
  const keptScopes = checkedScopes(config);
  const claims = ClaimTable.of(config);
  const introspection = deps.introspection ?? countingIntrospectionObserver();
  // A new verifier asks the introspection endpoint afresh too: its kept answers go with the old one.
  const introspector = (): Introspector | null =>
    config.auth.introspection.url === null
      ? null
      : new Introspector(config.auth, deps.env ?? process.env, keptScopes, claims, { clock, logger, observer: introspection });
  const fresh = (keySource: KeySource): TokenVerifier => new TokenVerifier(config.auth, keySource, clock, keptScopes, deps.tokens, claims, introspector());
  const before = previous?.keySource.remote ?? null;
  // The running key set of the same JWKS URL, if any: its keys are what a failed fetch keeps.
  const sameUrl = before !== null && before.url === config.auth.jwksUrl ? before : null;
  // Nothing the keys or the verifier depend on changed (no auth.* key, nor the scopes and claims tokens keep).
  const alike =
    previous !== null &&
    sameValue(previous.config.auth, config.auth) &&
    sameValue(checkedScopes(previous.config), keptScopes) &&
    sameClaims(ClaimTable.of(previous.config), claims)
      ? previous
      : null;
  // A JWKS URL's key source is kept with them, unless the fetch below changes the keys.
  const reused = sameUrl !== null ? alike : null;
  const keySource = reused?.keySource ?? (await resolveKeySource(config.auth, { clock, logger, tally: deps.jwks }));
  const remote = keySource.remote;
  if (remote === null) {
    // A local source is read again (a key file may have been replaced): the same keys keep the verified tokens.
    if (alike !== null && alike.keySource.remote === null && alike.keySource.fingerprint === keySource.fingerprint)
      return { keySource: alike.keySource, verifier: alike.verifier, claims, keysKept: null };
    return { keySource, verifier: fresh(keySource), claims, keysKept: null };
  }

  const fingerprint = remote.fingerprint;
  if (reused === null && sameUrl !== null) await remote.carryOver(sameUrl);
  await remote.refresh();
  const failure = remote.failure;
  if (failure !== null && previous !== null && sameUrl === null) {
    throw new KeySourceError(`auth.jwksUrl: could not fetch ${remote.url}: ${failure.message}`);
  }
  const kept = failure !== null && remote.loaded;
  const keepTokens = reused !== null && (kept || remote.fingerprint === fingerprint);
  const verifier = reused !== null && keepTokens ? reused.verifier : fresh(keySource);
  const keysKept = kept
    ? `the JWKS could not be fetched from ${remote.url} (${failure.message}): the key set fetched ${Math.round(remote.ageSeconds())} s ago is kept${keepTokens ? ', and so are the verified tokens' : ''}`
    : null;
  return { keySource, verifier, claims, keysKept };
}

import { ApiKeyAuthenticator } from '../auth/api-keys/authenticator.ts';
import type { Consumer } from '../auth/api-keys/consumer.ts';
import { readApiKeyFile } from '../auth/api-keys/key-file.ts';
import type { ClaimTable } from '../auth/claims.ts';
import { checkedScopes } from '../auth/scopes.ts';
import type { SharedState } from '../cluster/shared-state.ts';
import type { Config } from '../config/types.ts';
import type { Clock } from '../lib/clock.ts';
import type { ApiKeyTally } from '../observability/metrics.ts';

/**
 * The API keys a pipeline accepts (auth.apiKeys), or null when none: the key file, read now (a
 * bad one fails the start or the reload with a config problem naming it), and the keys in Redis
 * when auth.apiKeys.redis is on and redis.url is set (their store is the gateway's, kept across reloads).
 */
export async function buildApiKeys(
  config: Config,
  parts: { readonly shared: SharedState; readonly claims: ClaimTable; readonly clock: Clock; readonly tally: ApiKeyTally },
): Promise<ApiKeyAuthenticator | null> {
  const settings = config.auth.apiKeys;
  if (settings.file === null && !settings.redis) return null;
  const file: ReadonlyMap<string, Consumer> = settings.file === null ? new Map() : await readApiKeyFile(settings.file);
  const store = settings.redis ? parts.shared.apiKeys : null;
  store?.listen();
  return new ApiKeyAuthenticator(settings, { file, store, keptScopes: checkedScopes(config), claims: parts.claims, clock: parts.clock, tally: parts.tally });
}

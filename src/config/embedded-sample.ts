import { hasAddress } from './service-checks.ts';
import type { AuthConfig, Config } from './types.ts';

/** The keys that name a key source; with none of them set the gateway runs in dev auth mode. */
export const KEY_SOURCE_KEYS = ['jwksUrl', 'jwksFile', 'publicKeyFile', 'secret'] as const;

/** Dev auth mode: no key source is configured, so tokens are checked against a local dev key. */
export function isDevAuth(auth: AuthConfig): boolean {
  return KEY_SOURCE_KEYS.every((key) => auth[key] === null);
}

/** The resources and pass-through routes that read from the default service ("upstream"), as `resources.<name>` and `routes.<name>` keys. */
export function defaultServiceReaders(config: Config): string[] {
  const readers: string[] = [];
  for (const [name, r] of Object.entries(config.resources)) if (r.service === 'upstream') readers.push(`resources.${name}`);
  for (const [name, r] of Object.entries(config.routes)) if (r.service === 'upstream') readers.push(`routes.${name}`);
  return readers;
}

/**
 * Whether the gateway starts the embedded sample customer service as its default service: only
 * in dev auth mode, only when `upstream.url` is unset, and only when a resource (or a pass-through
 * route) reads from that service. Anywhere else an unset `upstream.url` that a resource needs is a config problem
 * (cross-key-checks.ts): a deployment with real keys that forgot its upstream must not serve
 * made-up customers.
 */
export function runsEmbeddedSample(config: Config): boolean {
  return !hasAddress(config.upstream) && isDevAuth(config.auth) && defaultServiceReaders(config).length > 0;
}

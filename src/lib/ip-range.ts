import { isIP } from 'node:net';

/**
 * An IPv4 or IPv6 address, or one with a prefix length (`10.0.0.0/8`, `fd00::/8`): what a
 * server.trustProxy entry must be. The config checks it when it is loaded; the server edge
 * builds its list of trusted proxies from entries that passed.
 */
export function isAddressOrRange(entry: string): boolean {
  const parts = entry.split('/');
  const family = isIP(parts[0] ?? '');
  if (family === 0 || parts.length > 2) return false;
  const prefix = parts[1];
  return prefix === undefined || (/^\d{1,3}$/.test(prefix) && Number(prefix) <= (family === 4 ? 32 : 128));
}

import { readFileSync } from 'node:fs';
import type { ConnectionOptions } from 'node:tls';
import type { UpstreamConfig } from '../config/types.ts';
import { ConfigError } from '../config/validate.ts';

/**
 * A service's `tls` keys as the options of its `https` targets' connections, with its files read
 * now: at start and on every reload (a renewed client certificate is taken up by a reload, whose
 * settings then differ, so the service's client is made afresh). A file that cannot be read, or a
 * certificate without its key, stops the start (or the reload) naming the key. Verification is
 * never off unless `rejectUnauthorized` says so by name.
 */
export function tlsOptionsOf(service: UpstreamConfig, at: string): ConnectionOptions {
  const { tls } = service;
  if ((tls.cert === null) !== (tls.key === null)) throw new ConfigError([`${at}.tls: cert and key go together (a client certificate needs its key)`]);
  const read = (key: 'ca' | 'cert' | 'key'): Buffer | undefined => {
    const file = tls[key];
    if (file === null) return undefined;
    try {
      return readFileSync(file);
    } catch (err) {
      throw new ConfigError([`${at}.tls.${key}: cannot read ${file} (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`]);
    }
  };
  const options: ConnectionOptions = { minVersion: tls.minVersion, rejectUnauthorized: tls.rejectUnauthorized };
  const ca = read('ca');
  const cert = read('cert');
  const key = read('key');
  if (ca !== undefined) options.ca = ca;
  if (cert !== undefined) options.cert = cert;
  if (key !== undefined) options.key = key;
  if (tls.servername !== null) options.servername = tls.servername;
  return options;
}

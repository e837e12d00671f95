import type { IncomingMessage } from 'node:http';
import { isIP } from 'node:net';
import type { TLSSocket } from 'node:tls';
import { clientAddressRule, trustedRule, type ClientAddressOf } from '../protocol/client-address.ts';

/**
 * `Forwarded` (RFC 7239) and `X-Forwarded-For`/`-Proto` as the gateway builds them for a service
 * with `forwarded: true`. Only what the gateway knows or server.trustProxy vouches for is said: the
 * client's address as the trusted proxies resolve it, and `https` from a TLS connection or from a
 * trusted proxy's `X-Forwarded-Proto`. Nothing the client wrote in these headers is passed on as is.
 */
export class ForwardedHeaders {
  readonly #client: ClientAddressOf;
  readonly #trusted: (address: string) => boolean;

  constructor(trustProxy: readonly string[]) {
    this.#client = clientAddressRule(trustProxy);
    this.#trusted = trustedRule(trustProxy);
  }

  /** Appends the three headers for `req` to a flat [name, value, ...] list. */
  append(headers: string[], req: IncomingMessage): void {
    const address = this.#client(req);
    const proto = this.#proto(req);
    const node = address === undefined ? 'unknown' : isIP(address) === 6 ? `"[${address}]"` : address;
    headers.push('forwarded', `for=${node};proto=${proto}`, 'x-forwarded-proto', proto);
    if (address !== undefined) headers.push('x-forwarded-for', address);
  }

  #proto(req: IncomingMessage): 'http' | 'https' {
    const peer = req.socket.remoteAddress;
    const claimed = req.headers['x-forwarded-proto'];
    if (peer !== undefined && this.#trusted(peer) && (claimed === 'http' || claimed === 'https')) return claimed;
    return (req.socket as Partial<TLSSocket>).encrypted === true ? 'https' : 'http';
  }
}

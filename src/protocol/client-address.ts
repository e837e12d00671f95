import type { IncomingMessage } from 'node:http';
import { BlockList, isIP } from 'node:net';

/** The address a request is from, as the access log and the rate limiter see it; undefined once its connection is gone. */
export type ClientAddressOf = (req: IncomingMessage) => string | undefined;

/** The connection's peer: the client itself, when no proxy is trusted. */
const peerAddress: ClientAddressOf = (req) => req.socket.remoteAddress;

/**
 * The rule for server.trustProxy (a list of proxy addresses and CIDR ranges). With the list
 * empty (the default) the client is the connection's peer, and nothing else is looked at: the
 * function returned is a property read.
 *
 * Otherwise, when the peer is a trusted proxy, X-Forwarded-For is read from the right (each proxy
 * appends the address it got the request from): every hop that is itself a trusted proxy is
 * passed over, and the first that is not is the client. Hops further left were written by
 * whoever sent the request to that client, so they are never believed. An entry that is not an
 * IP address (a port, garbage, `unknown`) ends the walk at the trusted hop to its right; so does
 * a missing header (then the client is the peer), and a header with only trusted hops gives its
 * leftmost one. This is nginx's `real_ip_recursive on` and Express's `trust proxy` with a list.
 */
export function clientAddressRule(trustProxy: readonly string[]): ClientAddressOf {
  if (trustProxy.length === 0) return peerAddress;
  const isTrusted = trustedRule(trustProxy);
  return (req) => {
    const peer = req.socket.remoteAddress;
    const forwarded = req.headers['x-forwarded-for'];
    if (peer === undefined || typeof forwarded !== 'string' || !isTrusted(peer)) return peer;
    let client = peer;
    // Repeated X-Forwarded-For fields arrive joined with ", " (joinDuplicateHeaders), in order.
    for (let end = forwarded.length; end > 0;) {
      const comma = forwarded.lastIndexOf(',', end - 1);
      const hop = forwarded.slice(comma + 1, end).trim();
      end = comma;
      if (isIP(hop) === 0) break;
      client = hop;
      if (!isTrusted(hop)) break;
    }
    return client;
  };
}

/** Is an address one of server.trustProxy's (addresses and CIDR ranges)? */
export function trustedRule(trustProxy: readonly string[]): (address: string) => boolean {
  const trusted = new BlockList();
  for (const entry of trustProxy) {
    const [address = '', prefix] = entry.split('/');
    const family = isIP(address) === 6 ? 'ipv6' : 'ipv4';
    if (prefix === undefined) trusted.addAddress(address, family);
    else trusted.addSubnet(address, Number(prefix), family);
  }
  return (address) => trusted.check(address, isIP(address) === 6 ? 'ipv6' : 'ipv4');
}

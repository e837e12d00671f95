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

/** Answers of a trustedRule kept at most; past it the memo starts over (it is only a saving). */
const MEMO_ENTRIES = 4096;

/**
 * Is an address one of server.trustProxy's (addresses and CIDR ranges)? BlockList.check costs
 * ~2 µs (it builds a SocketAddress each time) and a request behind a proxy asks it two or three
 * times, for the access log and again for the rate limiter: ~6 µs on a ~20 µs cache hit. Its
 * answers are kept per address text instead (a pure function of it), for IP addresses only (ASCII,
 * at most 45 characters), each key a copy of its own, so a memoised hop never keeps the
 * X-Forwarded-For value it was cut from.
 */
export function trustedRule(trustProxy: readonly string[]): (address: string) => boolean {
  const trusted = new BlockList();
  for (const entry of trustProxy) {
    const [address = '', prefix] = entry.split('/');
    const family = isIP(address) === 6 ? 'ipv6' : 'ipv4';
    if (prefix === undefined) trusted.addAddress(address, family);
    else trusted.addSubnet(address, Number(prefix), family);
  }
  const memo = new Map<string, boolean>();
  return (address) => {
    const known = memo.get(address);
    if (known !== undefined) return known;
    const version = isIP(address);
    const answer = trusted.check(address, version === 6 ? 'ipv6' : 'ipv4');
    if (version !== 0) {
      if (memo.size >= MEMO_ENTRIES) memo.clear();
      memo.set(Buffer.from(address, 'latin1').toString('latin1'), answer);
    }
    return answer;
  };
}

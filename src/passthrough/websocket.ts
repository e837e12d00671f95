import { createHash } from 'node:crypto';
import type { IncomingHttpHeaders, IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { HgError } from '../lib/errors.ts';

/** RFC 6455 section 1.3: the GUID appended to the key to make Sec-WebSocket-Accept. */
const WEBSOCKET_GUID = '258EAFA5-E914-47DA-95CA-C5AB0DC85B11';
/** A Sec-WebSocket-Key: 16 random bytes in base64 (RFC 6455 section 4.1). */
const KEY = /^[A-Za-z0-9+/]{22}==$/;

/** Is this an opening handshake (RFC 6455 section 4.2.1): a GET asking to upgrade to websocket? */
export function asksForWebSocket(req: IncomingMessage): boolean {
  return req.method === 'GET' && req.headers.upgrade?.toLowerCase() === 'websocket';
}

/** The handshake's key, or the 400 saying what is wrong with it (RFC 6455 section 4.2.1). */
export function handshakeKey(req: IncomingMessage): string {
  const key = req.headers['sec-websocket-key'];
  if (typeof key !== 'string' || !KEY.test(key))
    throw new HgError('HG_ERR_BAD_REQUEST', { detail: 'A WebSocket handshake needs one Sec-WebSocket-Key: 16 bytes in base64 (RFC 6455 section 4.1).' });
  if (req.headers['sec-websocket-version'] !== '13') {
    throw new HgError('HG_ERR_BAD_REQUEST', { detail: 'This gateway speaks WebSocket version 13 (RFC 6455).', headers: { 'Sec-WebSocket-Version': '13' } });
  }
  return key;
}

/** The Sec-WebSocket-Accept a server answers `key` with. */
export function acceptFor(key: string): string {
  return createHash('sha1')
    .update(key + WEBSOCKET_GUID)
    .digest('base64');
}

/**
 * Did the upstream accept the handshake (RFC 6455 section 4.1, the client's checks): `Upgrade:
 * websocket` and the Sec-WebSocket-Accept that answers the key. Anything else is never tunnelled:
 * a connection the upstream did not switch would carry the client's next bytes to it as requests
 * the gateway never saw.
 */
export function upstreamAccepted(headers: IncomingHttpHeaders, key: string): boolean {
  return headers.upgrade?.toLowerCase() === 'websocket' && headers['sec-websocket-accept'] === acceptFor(key);
}

/** The 101 head the client gets: the upstream's accepted subprotocol and extensions, and the request id. */
export function switchingHead(headers: IncomingHttpHeaders, key: string, requestId: string): string {
  let head = `HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: ${acceptFor(key)}\r\n`;
  for (const name of ['sec-websocket-protocol', 'sec-websocket-extensions']) {
    const value = headers[name];
    if (typeof value === 'string') head += `${name}: ${value}\r\n`;
  }
  return `${head}X-Request-Id: ${requestId}\r\n\r\n`;
}

/**
 * Joins two sockets byte for byte until either side closes or errs, or neither sends anything for
 * `idleMs`; then both are destroyed and `onEnd` hears how many bytes went to the client.
 */
export function tunnel(client: Duplex, upstream: Duplex, idleMs: number, onEnd: (bytesToClient: number, idle: boolean) => void): void {
  let toClient = 0;
  let ended = false;
  let idle = false;
  const timer = setTimeout(() => {
    idle = true;
    end();
  }, idleMs);
  const end = (): void => {
    if (ended) return;
    ended = true;
    clearTimeout(timer);
    client.destroy();
    upstream.destroy();
    onEnd(toClient, idle);
  };
  upstream.on('data', (chunk: Buffer) => {
    toClient += chunk.length;
    timer.refresh();
  });
  client.on('data', () => timer.refresh());
  for (const side of [client, upstream]) {
    side.once('close', end);
    side.once('error', end);
    side.once('end', end);
  }
  upstream.pipe(client);
  client.pipe(upstream);
}

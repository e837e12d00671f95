import type { Socket } from 'node:net';

/**
 * The one place hypergate reads Node's undocumented HTTP parser of a server connection
 * (`socket.parser`, an llhttp wrap), for something the public API lacks. Kept here so that
 * test/lib/http-parser.test.ts fails the day Node renames or drops it.
 */
interface TimedParser {
  /** Milliseconds since the message being parsed began (its first byte), by the clock Node times requests with; 0 when none is. */
  duration?(): number;
}

/**
 * How long ago the first byte of the request now being parsed on this connection arrived, in ms:
 * the instant Node's own server.requestTimeout counts from (node_http_parser.cc,
 * last_message_start_). 0 once the request is complete, and when Node does not say.
 */
export function msSinceRequestBegan(socket: Socket): number {
  const parser = (socket as unknown as { parser?: TimedParser | null }).parser;
  return typeof parser?.duration === 'function' ? parser.duration() : 0;
}

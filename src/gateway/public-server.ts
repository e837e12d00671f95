import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { ServerConfig } from '../config/types.ts';
import { LINGER_MS, lingerOn } from '../protocol/body.ts';
import { handleClientError, refuseConnect } from '../http/client-error.ts';
import { ConnectionSweeper } from '../http/keep-alive.ts';
import { upgradeListener } from '../http/upgrade.ts';
import { HgRequest, HgResponse } from '../protocol/response.ts';

export interface PublicServer {
  readonly server: Server;
  /** server.keepAliveTimeoutMs and server.sendTimeoutMs. */
  readonly sweeper: ConnectionSweeper;
  /** Applies the server.* settings that can change without a restart (reload). */
  apply(s: ServerConfig): void;
  /** Hands new requests to another dispatcher (reload); requests under way finish on the old one. */
  setDispatch(next: Dispatch): void;
  /**
   * Whether requests that ask to upgrade their connection go to the dispatcher as such (a
   * pass-through route tunnels WebSockets) or are plain requests to node:http (no listener: the
   * Upgrade header is ignored, as it always was).
   */
  setUpgrades(on: boolean): void;
}

type Dispatch = (req: IncomingMessage, res: HgResponse) => void;

/**
 * The public node:http server with hypergate's limits. Every request, and every request that
 * carries an Expect header, goes to the current dispatcher. `lingerMs`: how long a connection whose
 * last answer refused what the client may still be sending stays open, reading and dropping it.
 */
export function createPublicServer(s: ServerConfig, initial: Dispatch, lingerMs = LINGER_MS): PublicServer {
  let dispatch = initial;
  const server = createServer<typeof HgRequest, typeof HgResponse>({
    IncomingMessage: HgRequest,
    ServerResponse: HgResponse,
    maxHeaderSize: s.maxHeaderBytes,
    headersTimeout: s.headersTimeoutMs,
    requestTimeout: s.requestTimeoutMs,
    connectionsCheckingInterval: Math.min(1000, s.headersTimeoutMs),
    // Node's own answer to a missing Host is a bare 400; the dispatcher answers it with a problem.
    requireHostHeader: false,
    // Repeated fields arrive joined ("a, b", RFC 9110 section 5.3) rather than all but the first
    // dropped, so a second Host is seen (400) and list fields like If-None-Match keep every member.
    joinDuplicateHeaders: true,
  });
  lingerOn(server, lingerMs);
  // server.keepAliveTimeoutMs and server.sendTimeoutMs, without per-request timers (see keep-alive.ts).
  const sweeper = new ConnectionSweeper(server, { keepAliveMs: s.keepAliveTimeoutMs, sendMs: s.sendTimeoutMs });
  // The dispatcher is the listener itself: no wrapper call per request on the hot path.
  server.on('request', dispatch);
  server.on('clientError', handleClientError);
  server.on('connect', refuseConnect);
  // Left alone, Node answers "Expect: 100-continue" with 100 Continue, inviting a body no route
  // takes, and any other expectation with a bare 417. Both go to the dispatcher instead: no 100
  // is sent (RFC 9110 section 10.1.1 lets a server answer at once), a body gets its 413.
  const expecting = (req: IncomingMessage, res: HgResponse): void => dispatch(req, res);
  server.on('checkContinue', expecting);
  server.on('checkExpectation', expecting);
  const apply = (next: ServerConfig): void => {
    server.headersTimeout = next.headersTimeoutMs;
    server.requestTimeout = next.requestTimeoutMs;
    sweeper.setTimeouts({ keepAliveMs: next.keepAliveTimeoutMs, sendMs: next.sendTimeoutMs });
    // Node drops header fields past maxHeadersCount without a word; keeping one more lets the
    // dispatcher see that the request went over server.maxHeaderCount and answer 431.
    server.maxHeadersCount = next.maxHeaderCount + 1;
  };
  const setDispatch = (next: Dispatch): void => {
    server.off('request', dispatch);
    server.on('request', next);
    dispatch = next;
  };
  const upgrades = upgradeListener(() => dispatch);
  const setUpgrades = (on: boolean): void => {
    server.off('upgrade', upgrades);
    if (on) server.on('upgrade', upgrades);
  };
  apply(s);
  return { server, sweeper, apply, setDispatch, setUpgrades };
}

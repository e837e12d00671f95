import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { HgError } from '../lib/errors.ts';
import { rawProblemResponse } from '../protocol/problem.ts';
import { HgResponse, markUpgrade } from '../protocol/response.ts';

type Dispatch = (req: IncomingMessage, res: HgResponse) => void;

/**
 * node:http's 'upgrade' listener, while some pass-through route tunnels WebSockets. Once a server
 * has one, node:http hands it every request that asks to upgrade, whatever its path, and writes
 * no answer for it: here each gets an answer object on its socket and goes through the dispatcher
 * like any request (request id, Host, routing, authorization, metrics, access log). A WebSocket
 * route tunnels it; every other route answers it as a plain request (RFC 9110 section 7.8 lets a
 * server ignore Upgrade) and the connection closes after the answer, since node:http reads
 * nothing more from it. A request that asks to upgrade and carries a body is refused: once node:http
 * has handed the connection over it parses no body.
 */
export function upgradeListener(dispatch: () => Dispatch) {
  return (req: IncomingMessage, socket: Duplex, head: Buffer): void => {
    socket.on('error', () => {});
    if (req.headers['transfer-encoding'] !== undefined || Number(req.headers['content-length'] ?? 0) > 0) {
      socket.end(rawProblemResponse(new HgError('HG_ERR_BAD_REQUEST', { detail: 'A request that asks to upgrade its connection carries no body.' })));
      return;
    }
    markUpgrade(req, head);
    const res = new HgResponse(req);
    res.shouldKeepAlive = false;
    res.assignSocket(socket as Socket);
    // node:http ends such a connection itself only for the answers it made: this one closes here.
    res.once('finish', () => socket.end());
    dispatch()(req, res);
  };
}

import { connect } from 'node:net';
import { request } from 'undici';
import { mergeConfig } from '../../src/config/load.ts';
import { createGateway, type Gateway, type GatewayDeps } from '../../src/gateway/create-gateway.ts';
import { configWith } from '../../src/gateway/load-config.ts';
import { contractCheckOn, recordAnswer, stopWatching, watchAnswers } from './contract.ts';

export interface RunningGateway {
  readonly gateway: Gateway;
  readonly url: string;
  readonly port: number;
  /** http://127.0.0.1:<admin port>, or null when the admin listener is off. */
  readonly adminUrl: string | null;
  close(): Promise<void>;
}

/**
 * A real gateway from createGateway on 127.0.0.1:0, with config overrides over the defaults.
 * The admin listener is off unless the overrides set `admin` (then give it port 0).
 */
export async function startGateway(overrides: unknown, deps: GatewayDeps = {}): Promise<RunningGateway> {
  const config = configWith(mergeConfig({ server: { port: 0, host: '127.0.0.1' }, admin: { port: null } }, overrides));
  const gateway = await createGateway(config, deps);
  const address = await gateway.listen();
  if (contractCheckOn()) watchAnswers(`http://127.0.0.1:${address.port}`);
  return {
    gateway,
    url: `http://127.0.0.1:${address.port}`,
    port: address.port,
    adminUrl: gateway.adminAddress() === null ? null : `http://127.0.0.1:${gateway.adminAddress()?.port}`,
    close: () => {
      stopWatching(`http://127.0.0.1:${address.port}`);
      return gateway.close(0);
    },
  };
}

export interface HttpAnswer {
  readonly status: number;
  readonly headers: Record<string, string | string[] | undefined>;
  readonly text: string;
  json(): unknown;
}

/** One real HTTP request with undici; the body is read whole. */
export async function get(
  url: string,
  headers: Record<string, string> = {},
  method: 'GET' | 'HEAD' | 'POST' | 'PUT' | 'DELETE' | 'PATCH' | 'OPTIONS' = 'GET',
): Promise<HttpAnswer> {
  const res = await request(url, { method, headers });
  const text = await res.body.text();
  recordAnswer(url, method, { status: res.statusCode, headers: res.headers, text });
  return { status: res.statusCode, headers: res.headers, text, json: () => JSON.parse(text) as unknown };
}

/** One real request with a body (a write); the answer read whole. */
export async function send(
  url: string,
  method: 'POST' | 'PUT' | 'PATCH' | 'DELETE',
  headers: Record<string, string>,
  body?: string | Buffer,
): Promise<HttpAnswer> {
  const res = await request(url, { method, headers, body });
  const text = await res.body.text();
  recordAnswer(url, method, { status: res.statusCode, headers: res.headers, text });
  return { status: res.statusCode, headers: res.headers, text, json: () => JSON.parse(text) as unknown };
}

export function bearer(token: string): Record<string, string> {
  return { authorization: `Bearer ${token}` };
}

/** What a raw exchange saw: the bytes the server wrote, and whether it closed the connection. */
export interface RawExchange {
  readonly text: string;
  /** True when the server closed (or reset) the connection, false when the wait ran out first. */
  readonly closed: boolean;
}

/**
 * Sends raw bytes on a fresh socket (a string, or chunks written `gapMs` apart) and returns
 * everything the server wrote until it closed the connection or `timeoutMs` passed.
 */
export function rawExchange(port: number, payload: string | Buffer | readonly (string | Buffer)[], timeoutMs = 3000, gapMs = 0): Promise<RawExchange> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    const parts = typeof payload === 'string' || Buffer.isBuffer(payload) ? [payload] : [...payload];
    let writer: NodeJS.Timeout | undefined;
    const finish = (closed: boolean): void => {
      clearTimeout(timer);
      clearInterval(writer);
      resolve({ text: Buffer.concat(chunks).toString('latin1'), closed });
    };
    const timer = setTimeout(() => {
      socket.destroy();
      finish(false);
    }, timeoutMs);
    socket.on('data', (chunk) => chunks.push(chunk));
    socket.on('error', (err) => {
      if (chunks.length > 0 || (err as NodeJS.ErrnoException).code === 'ECONNRESET') finish(true);
      else {
        clearTimeout(timer);
        clearInterval(writer);
        reject(err);
      }
    });
    socket.on('close', () => finish(true));
    if (gapMs === 0) {
      for (const part of parts) socket.write(part);
      return;
    }
    let next = 0;
    writer = setInterval(() => {
      const part = parts[next++];
      if (part === undefined || socket.destroyed) clearInterval(writer);
      else socket.write(part);
    }, gapMs);
  });
}

/** Sends raw bytes on a fresh socket and returns everything the server wrote before closing. */
export async function rawRequest(port: number, payload: string | Buffer, timeoutMs = 3000): Promise<string> {
  return (await rawExchange(port, payload, timeoutMs)).text;
}

/** Status code and body of a raw HTTP/1.1 answer. */
export function parseRaw(answer: string): { status: number; head: string; body: string } {
  const end = answer.indexOf('\r\n\r\n');
  const head = end === -1 ? answer : answer.slice(0, end);
  return { status: Number(head.split(' ')[1]), head, body: end === -1 ? '' : answer.slice(end + 4) };
}

/** Asserts a body is an RFC 9457 problem with this status; returns it. */
export function problemOf(answer: HttpAnswer): { type: string; title: string; status: number; detail: string; code: string } {
  return answer.json() as { type: string; title: string; status: number; detail: string; code: string };
}

import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** What the endpoint does with the next calls: answer, answer late, answer something that is not an answer, or fail. */
export type IntrospectionMode =
  | { readonly kind: 'answer' }
  /** Holds every answer until `release()` is called. */
  | { readonly kind: 'hold' }
  /** Never answers (the connection stays open until the server closes). */
  | { readonly kind: 'silent' }
  /** Answers 200 with this body as it is (not JSON, JSON without `active`, ...). */
  | { readonly kind: 'raw'; readonly body: string }
  | { readonly kind: 'status'; readonly status: number };

/** One call as the endpoint received it. */
export interface IntrospectionCall {
  readonly authorization: string | undefined;
  readonly contentType: string | undefined;
  readonly form: URLSearchParams;
}

export interface IntrospectionServer {
  readonly url: string;
  /** Every call received, in order. */
  readonly calls: IntrospectionCall[];
  /** The answer for a token (RFC 7662 section 2.2); a token without one is inactive. */
  answer(token: string, answer: Record<string, unknown>): void;
  mode: IntrospectionMode;
  /** Lets held answers go (mode `hold`). */
  release(): void;
  close(): Promise<void>;
}

/** A token introspection endpoint on 127.0.0.1 (real node:http), written for the tests. */
export async function startIntrospectionServer(): Promise<IntrospectionServer> {
  const answers = new Map<string, Record<string, unknown>>();
  const calls: IntrospectionCall[] = [];
  let held: (() => void)[] = [];
  const state: IntrospectionServer = {
    url: '',
    calls,
    answer: (token, answer) => void answers.set(token, answer),
    mode: { kind: 'answer' },
    release: () => {
      const go = held;
      held = [];
      for (const send of go) send();
    },
    close: () => {
      server.closeAllConnections();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  const respond = (req: IncomingMessage, res: ServerResponse, body: string): void => {
    const form = new URLSearchParams(body);
    calls.push({ authorization: req.headers.authorization, contentType: req.headers['content-type'], form });
    const mode = state.mode;
    const send = (): void => {
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify(answers.get(form.get('token') ?? '') ?? { active: false }));
    };
    if (mode.kind === 'silent') return;
    if (mode.kind === 'hold') held.push(send);
    else if (mode.kind === 'raw') res.end(mode.body);
    else if (mode.kind === 'status') {
      res.statusCode = mode.status;
      res.end('{"error":"server_error"}');
    } else send();
  };
  const server = createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => (body += chunk));
    req.on('end', () => respond(req, res, body));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return Object.assign(state, { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/introspect` });
}

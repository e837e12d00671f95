import type { ServerResponse } from 'node:http';
import { ERRORS, HgError, PROBLEM_TYPE_BASE, type ProblemValue } from '../lib/errors.ts';
import { HgResponse } from './response.ts';

export const PROBLEM_CONTENT_TYPE = 'application/problem+json';

export interface ProblemBody {
  readonly type: string;
  readonly title: string;
  readonly status: number;
  readonly detail: string;
  /** HG_ERR_*: a registry code, or a resource's own (HG_ERR_CUSTOMER_NOT_FOUND). */
  readonly code: string;
  /** Extension members (RFC 9457 section 3.2), after the standard ones, which they never replace. */
  readonly [extension: string]: ProblemValue;
}

export function problemBody(err: HgError): ProblemBody {
  const def = ERRORS[err.code];
  const who = err.identity ?? { slug: def.slug, title: def.title, code: err.code };
  const body: Record<string, ProblemValue> = {
    type: `${PROBLEM_TYPE_BASE}${who.slug}`,
    title: who.title,
    status: def.status,
    detail: err.detail,
    code: who.code,
  };
  for (const [member, value] of Object.entries(err.extensions ?? {})) if (!(member in body)) body[member] = value;
  return body as ProblemBody;
}

/** A problem answer as data: status, header fields in order, and body text. */
export interface ProblemRecord {
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
}

/**
 * A problem answer kept to be written later (an idempotent write's final refusal, replayed to a
 * retry): the same media type, Cache-Control and body as sendProblem writes, the error's own
 * header fields after them.
 */
export function problemRecord(err: HgError): ProblemRecord {
  return {
    status: err.status,
    headers: { 'Content-Type': PROBLEM_CONTENT_TYPE, 'Cache-Control': 'no-store', ...err.headers },
    body: JSON.stringify(problemBody(err)),
  };
}

/** The bytes of a whole HTTP/1.1 error answer, for sockets that have no ServerResponse (parse errors). */
export function rawProblemResponse(err: HgError): Buffer {
  const body = JSON.stringify(problemBody(err));
  let extra = '';
  for (const [name, value] of Object.entries(err.headers ?? {})) extra += `${name}: ${value}\r\n`;
  const head =
    `HTTP/1.1 ${err.status} ${ERRORS[err.code].title}\r\n` +
    `Content-Type: ${PROBLEM_CONTENT_TYPE}\r\n` +
    'Cache-Control: no-store\r\n' +
    `Content-Length: ${Buffer.byteLength(body)}\r\n` +
    extra +
    'Connection: close\r\n\r\n';
  return Buffer.from(head + body);
}

/** Writes an RFC 9457 problem answer. Nothing else in hypergate writes error bodies. */
export function sendProblem(res: ServerResponse, err: HgError, headOnly: boolean): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  const body = Buffer.from(JSON.stringify(problemBody(err)));
  const headers: Record<string, string | number> = {
    'Content-Type': PROBLEM_CONTENT_TYPE,
    'Cache-Control': 'no-store',
    'Content-Length': body.length,
  };
  if (err.headers) Object.assign(headers, err.headers);
  if (res instanceof HgResponse) {
    if (res.requestId !== '') headers['X-Request-Id'] = res.requestId;
    res.bytes = headOnly ? 0 : body.length;
  }
  res.writeHead(err.status, headers);
  res.end(headOnly ? undefined : body);
}

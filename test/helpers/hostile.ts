import assert from 'node:assert/strict';
import { after, before } from 'node:test';
import { ERRORS, PROBLEM_TYPE_BASE, type HgErrorCode } from '../../src/lib/errors.ts';
import type { GatewayDeps } from '../../src/gateway/create-gateway.ts';
import { notFoundIdentity } from '../../src/resources/naming.ts';
import { startFixture, type Fixture } from './fixture.ts';
import { get, rawExchange, type HttpAnswer } from './gateway.ts';

/** Status, type slug and title of a code: the registry's, or a resource's not-found identity (derived from its noun). */
function problemDefinition(code: ExpectedProblem['code']): { status: number; slug: string; title: string } {
  if (code in ERRORS) return ERRORS[code as HgErrorCode];
  const noun = /^HG_ERR_(.+)_NOT_FOUND$/.exec(code)?.[1] ?? code;
  return { ...notFoundIdentity(noun.toLowerCase()), status: ERRORS.HG_ERR_RESOURCE_NOT_FOUND.status };
}

/** What one hostile input must get: the status and code, and any header the RFCs require with it. */
export interface ExpectedProblem {
  readonly status: number;
  /** A registry code, or a declared resource's own not-found code (HG_ERR_CUSTOMER_NOT_FOUND). */
  readonly code: HgErrorCode | `HG_ERR_${string}_NOT_FOUND`;
  /** Lower-case header name → exact value, or a pattern. */
  readonly headers?: Readonly<Record<string, string | RegExp>>;
}

/** An answer read off a raw socket, shaped like undici's (lower-case header names). */
export interface RawAnswer {
  readonly status: number;
  readonly headers: Record<string, string>;
  readonly text: string;
  readonly closed: boolean;
}

export async function rawAnswer(port: number, payload: string | Buffer, timeoutMs = 3000): Promise<RawAnswer> {
  const { text, closed } = await rawExchange(port, payload, timeoutMs);
  const end = text.indexOf('\r\n\r\n');
  const [statusLine = '', ...lines] = (end === -1 ? text : text.slice(0, end)).split('\r\n');
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const colon = line.indexOf(':');
    if (colon > 0) headers[line.slice(0, colon).toLowerCase()] = line.slice(colon + 1).trim();
  }
  const status = /^HTTP\/1\.1 (\d{3}) /.exec(statusLine)?.[1];
  return { status: status === undefined ? 0 : Number(status), headers, text: end === -1 ? '' : text.slice(end + 4), closed };
}

/**
 * Asserts the whole answer to a hostile input: exact status, problem+json, the problem body's
 * type, title, status and code as the registry defines them, the required headers, and no
 * internal detail (addresses, stack frames, error codes of Node or undici).
 */
export function assertProblem(answer: Pick<HttpAnswer, 'status' | 'headers' | 'text'>, expected: ExpectedProblem): void {
  const def = problemDefinition(expected.code);
  assert.equal(answer.status, expected.status, `status (body: ${answer.text.slice(0, 300)})`);
  assert.equal(def.status, expected.status, `${expected.code} is a ${def.status} in the registry`);
  assert.equal(answer.headers['content-type'], 'application/problem+json');
  assert.equal(answer.headers['cache-control'], 'no-store');
  const body = JSON.parse(answer.text) as Record<string, unknown>;
  assert.equal(body['type'], `${PROBLEM_TYPE_BASE}${def.slug}`);
  assert.equal(body['title'], def.title);
  assert.equal(body['status'], expected.status);
  assert.equal(body['code'], expected.code);
  assert.equal(typeof body['detail'], 'string');
  for (const [name, value] of Object.entries(expected.headers ?? {})) {
    const actual = answer.headers[name];
    if (value instanceof RegExp) assert.match(String(actual), value, name);
    else assert.equal(actual, value, name);
  }
  assert.doesNotMatch(answer.text, /127\.0\.0\.1|ECONN|UND_ERR|HPE_|\bat .*\.ts|node:internal/, 'no internal detail reaches the client');
}

/** After every hostile input, an ordinary request still gets its answer. */
export async function assertStillServes(url: string, token: string): Promise<void> {
  const res = await get(`${url}/api/customers/42`, { authorization: `Bearer ${token}` });
  assert.equal(res.status, 200, `a good request after the hostile one: ${res.text}`);
  assert.equal((res.json() as { id: number }).id, 42);
}

/** RFC 6750 section 3 challenges. */
export const CHALLENGE = {
  bare: 'Bearer realm="hypergate"',
  invalidRequest: /^Bearer realm="hypergate", error="invalid_request", error_description="[^"]+"$/,
  invalidToken: /^Bearer realm="hypergate", error="invalid_token", error_description="[^"]+"$/,
  insufficientScope: 'Bearer realm="hypergate", error="insufficient_scope", scope="customers:read"',
} as const;

/** A fixture for the whole suite (started in `before`, closed in `after`) and a day-long token. */
export interface SuiteWorld {
  readonly fx: Fixture;
  readonly token: string;
}

export function suiteFixture(overrides: unknown = {}, deps: Omit<GatewayDeps, 'clock'> = {}): SuiteWorld {
  const world = {} as { fx: Fixture; token: string };
  before(async () => {
    world.fx = await startFixture(overrides, deps);
    world.token = await world.fx.token({ expiresIn: 24 * 3600 });
  });
  after(() => world.fx.close());
  return world;
}

import assert from 'node:assert/strict';
import type { IncomingMessage } from 'node:http';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { assertTokenSyntax, readBearerToken } from '../../src/auth/bearer.ts';
import { HgError } from '../../src/lib/errors.ts';
import { ifNoneMatchMatches } from '../../src/protocol/conditional.ts';
import { NONE_ACCEPTABLE, Negotiator } from '../../src/protocol/negotiate.ts';
import { isSafeRequestId } from '../../src/observability/request-id.ts';
import { parseCanonicalInteger as parseCustomerId } from '../../src/resources/params.ts';

/**
 * Property tests of the parsers that read request text: they never throw anything but our
 * typed errors, and accept exactly what their rules say. Pure functions, so many runs are cheap.
 */
const RUNS = { numRuns: 500 } as const;

/** Any string: printable, full Unicode, or raw Latin-1 bytes as Node hands header values over. */
const anyText = fc.oneof(fc.string({ maxLength: 200 }), fc.string({ unit: 'binary', maxLength: 200 }), fc.string({ unit: 'binary-ascii', maxLength: 200 }));
const B64TOKEN_CHARS = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~+/';
const b64token = fc
  .tuple(fc.string({ unit: fc.constantFrom(...B64TOKEN_CHARS), minLength: 1, maxLength: 300 }), fc.string({ unit: fc.constant('='), maxLength: 3 }))
  .map(([body, pad]) => body + pad);

/** The two fields readBearerToken reads, as node:http fills them for one Authorization header. */
function requestWith(authorization: string | undefined, count = authorization === undefined ? 0 : 1): IncomingMessage {
  const rawHeaders: string[] = ['Host', 'x'];
  for (let i = 0; i < count; i++) rawHeaders.push('Authorization', authorization ?? '');
  return { headers: authorization === undefined ? {} : { authorization }, rawHeaders } as unknown as IncomingMessage;
}

/** Runs `fn`; a throw must be one of our 400/401 errors with an RFC 6750 challenge. */
function tokenOrChallenge(fn: () => string): string | HgError {
  try {
    return fn();
  } catch (err) {
    assert.ok(err instanceof HgError, `only typed errors escape: ${String(err)}`);
    assert.ok(err.status === 400 || err.status === 401, `${err.code}`);
    assert.match(err.headers?.['WWW-Authenticate'] ?? '', /^Bearer realm="hypergate"/);
    return err;
  }
}

describe('property: the customer id parser', () => {
  test('accepts exactly the canonical decimal spelling of 1 .. 2^53-1, and never throws', () => {
    fc.assert(
      fc.property(anyText, (segment) => {
        const id = parseCustomerId(segment);
        if (id === null) return;
        assert.ok(Number.isSafeInteger(id) && id >= 1);
        assert.equal(String(id), segment, 'the only spelling accepted is the canonical one');
      }),
      RUNS,
    );
  });

  test('every safe positive integer round-trips', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: Number.MAX_SAFE_INTEGER }), (n) => parseCustomerId(String(n)) === n),
      RUNS,
    );
  });

  test('a canonical id with anything added around it is refused', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 1e9 }),
        fc.constantFrom('0', '+', '-', ' ', '%', '.', 'e', '/', ';', '\u0661', '\uff11'),
        fc.boolean(),
        (n, extra, before) => {
          assert.equal(parseCustomerId(before ? extra + String(n) : String(n) + extra), extra === '0' && !before ? n * 10 : null);
        },
      ),
      RUNS,
    );
  });
});

describe('property: the bearer header parser', () => {
  test('any header value gives a token or a typed 400/401 with a challenge, never another exception', () => {
    fc.assert(
      fc.property(
        fc.oneof(
          anyText,
          anyText.map((t) => `Bearer ${t}`),
          anyText.map((t) => `bearer${t}`),
        ),
        (value) => {
          const result = tokenOrChallenge(() => readBearerToken(requestWith(value), 8192));
          if (typeof result === 'string') {
            assert.ok(result.length > 0 && result.charCodeAt(0) !== 32, 'a token is non-empty and starts after the spaces');
            assert.ok(value.toLowerCase().startsWith('bearer ') && value.endsWith(result));
          }
        },
      ),
      RUNS,
    );
  });

  test('"Bearer" in any case, one or more spaces, and a b64token gives back exactly that token', () => {
    fc.assert(
      fc.property(fc.constantFrom('Bearer', 'bearer', 'BEARER', 'bEaReR'), fc.integer({ min: 1, max: 4 }), b64token, (scheme, spaces, token) => {
        assert.equal(readBearerToken(requestWith(`${scheme}${' '.repeat(spaces)}${token}`), 8192), token);
        assertTokenSyntax(token);
      }),
      RUNS,
    );
  });

  test('a token with any character outside the b64token set is refused as invalid_request', () => {
    const outside = fc.string({ unit: 'binary', minLength: 1, maxLength: 1 }).filter((c) => !B64TOKEN_CHARS.includes(c) && c !== '=');
    fc.assert(
      fc.property(b64token, outside, fc.nat(), (token, bad, at) => {
        const i = at % (token.length + 1);
        const broken = token.slice(0, i) + bad + token.slice(i);
        const result = tokenOrChallenge(() => {
          assertTokenSyntax(broken);
          return broken;
        });
        assert.ok(result instanceof HgError && result.code === 'HG_ERR_AUTH_INVALID_REQUEST', JSON.stringify(broken));
      }),
      RUNS,
    );
  });

  test('two Authorization headers are refused whatever they hold', () => {
    fc.assert(
      fc.property(b64token, (token) => {
        const result = tokenOrChallenge(() => readBearerToken(requestWith(`Bearer ${token}`, 2), 8192));
        assert.ok(result instanceof HgError && result.code === 'HG_ERR_AUTH_INVALID_REQUEST');
      }),
      RUNS,
    );
  });

  test('a token longer than the limit is refused before anything else is looked at', () => {
    fc.assert(
      fc.property(fc.integer({ min: 64, max: 512 }), fc.integer({ min: 1, max: 100 }), (limit, over) => {
        const result = tokenOrChallenge(() => readBearerToken(requestWith(`Bearer ${'a'.repeat(limit + over)}`), limit));
        assert.ok(result instanceof HgError && result.code === 'HG_ERR_AUTH_INVALID_REQUEST');
      }),
      RUNS,
    );
  });
});

describe('property: other request header parsers', () => {
  const negotiator = new Negotiator(['application/json', 'application/hal+json']);

  test('Accept: any value picks one of the offered formats or none, never throws', () => {
    fc.assert(
      fc.property(
        fc.oneof(
          anyText,
          fc
            .array(fc.constantFrom('application/json', 'application/*', '*/*', 'text/html', ';q=0', ';q=0.5', ';q=x', ',', ' '), { maxLength: 12 })
            .map((p) => p.join('')),
        ),
        (accept) => {
          const index = negotiator.pick(accept);
          assert.ok(index === NONE_ACCEPTABLE || index === 0 || index === 1);
        },
      ),
      RUNS,
    );
  });

  test('If-None-Match: any value is a yes or a no, and the ETag itself always matches', () => {
    // Our ETags are quoted base64url digests (cache/representation.ts).
    const etag = fc
      .string({ unit: fc.constantFrom(...'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_'), minLength: 1, maxLength: 27 })
      .map((t) => `"${t}"`);
    fc.assert(
      fc.property(anyText, etag, (header, tag) => {
        assert.equal(typeof ifNoneMatchMatches(header, tag), 'boolean');
        assert.equal(ifNoneMatchMatches(`${header}, ${tag}`, tag), true);
      }),
      RUNS,
    );
  });

  test('X-Request-Id: an id judged safe has no character that could split a header or a log line', () => {
    fc.assert(
      fc.property(anyText, (id) => {
        if (isSafeRequestId(id)) assert.match(id, /^[A-Za-z0-9\-._:/+=@]{1,128}$/);
      }),
      RUNS,
    );
  });
});

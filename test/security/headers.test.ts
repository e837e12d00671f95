import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { get } from '../helpers/gateway.ts';
import { assertProblem, assertStillServes, suiteFixture, CHALLENGE, rawAnswer, type ExpectedProblem } from '../helpers/hostile.ts';

/**
 * Hostile input catalogue, part 2: header and protocol abuse, on raw sockets so the bytes are
 * exactly the hostile ones (an HTTP client library would refuse to send most of them).
 */
describe('hostile input: headers and protocol', () => {
  const w = suiteFixture();

  const line = (method = 'GET', path = '/api/customers/1'): string => `${method} ${path} HTTP/1.1\r\n`;
  const host = 'Host: x\r\n';
  const close = 'Connection: close\r\n\r\n';

  const missing: ExpectedProblem = { status: 401, code: 'HG_ERR_AUTH_MISSING', headers: { 'www-authenticate': CHALLENGE.bare } };
  const invalidRequest: ExpectedProblem = { status: 400, code: 'HG_ERR_AUTH_INVALID_REQUEST', headers: { 'www-authenticate': CHALLENGE.invalidRequest } };
  const unparsable: ExpectedProblem = { status: 400, code: 'HG_ERR_BAD_REQUEST', headers: { connection: 'close' } };
  const badHost: ExpectedProblem = { status: 400, code: 'HG_ERR_BAD_REQUEST' };
  const badTarget: ExpectedProblem = { status: 400, code: 'HG_ERR_BAD_REQUEST' };
  const tooLarge: ExpectedProblem = { status: 431, code: 'HG_ERR_HEADERS_TOO_LARGE', headers: { connection: 'close' } };

  // [name, raw request bytes, what it must get]
  const cases: Array<[string, () => string | Buffer, ExpectedProblem]> = [
    ['no Authorization header', () => `${line()}${host}${close}`, missing],
    ['"Bearer" with nothing after it', () => `${line()}${host}Authorization: Bearer\r\n${close}`, invalidRequest],
    ['"Bearer" followed by spaces only', () => `${line()}${host}Authorization: Bearer    \r\n${close}`, invalidRequest],
    ['the Basic scheme', () => `${line()}${host}Authorization: Basic dXNlcjpwYXNz\r\n${close}`, missing],
    ['the Digest scheme', () => `${line()}${host}Authorization: Digest username="a", realm="b"\r\n${close}`, missing],
    ['"Bearer" glued to the token', () => `${line()}${host}Authorization: Bearer${w.token}\r\n${close}`, missing],
    ['a token with a space in it', () => `${line()}${host}Authorization: Bearer abc def\r\n${close}`, invalidRequest],
    ['two tokens in one header', () => `${line()}${host}Authorization: Bearer ${w.token}, Bearer ${w.token}\r\n${close}`, invalidRequest],
    ['a JSON object for a token', () => `${line()}${host}Authorization: Bearer {"alg":"none"}\r\n${close}`, invalidRequest],
    [
      'two Authorization headers, the first valid',
      () => `${line()}${host}Authorization: Bearer ${w.token}\r\nAuthorization: Bearer other\r\n${close}`,
      invalidRequest,
    ],
    ['a token over auth.maxTokenBytes', () => `${line()}${host}Authorization: Bearer ${'a'.repeat(9000)}\r\n${close}`, invalidRequest],
    ['a giant Authorization header (over server.maxHeaderBytes)', () => `${line()}${host}Authorization: Bearer ${'a'.repeat(20_000)}\r\n${close}`, tooLarge],
    ['a giant unrelated header', () => `${line()}${host}Authorization: Bearer ${w.token}\r\nX-Big: ${'b'.repeat(20_000)}\r\n${close}`, tooLarge],
    ['a tab inside the token', () => `${line()}${host}Authorization: Bearer abc\tdef\r\n${close}`, invalidRequest],
    ['a Latin-1 byte inside the token', () => Buffer.from(`${line()}${host}Authorization: Bearer abc\xffdef\r\n${close}`, 'latin1'), invalidRequest],
    ['a control character (0x01) in a header value', () => `${line()}${host}Authorization: Bearer abc\x01def\r\n${close}`, unparsable],
    ['DEL (0x7f) in a header value', () => `${line()}${host}Authorization: Bearer abc\x7fdef\r\n${close}`, unparsable],
    ['NUL in a header value', () => `${line()}${host}Authorization: Bearer abc\x00def\r\n${close}`, unparsable],
    ['a bare CR in a header value', () => `${line()}${host}X-A: b\rc\r\n${close}`, unparsable],
    ['LF-only line endings', () => `GET /api/customers/1 HTTP/1.1\nHost: x\nAuthorization: Bearer ${w.token}\n\n`, unparsable],
    ['an obsolete folded header line', () => `${line()}${host}X-A: b\r\n c\r\n${close}`, unparsable],
    ['a space before the colon', () => `${line()}${host}Authorization : Bearer ${w.token}\r\n${close}`, unparsable],
    ['a header name with a parenthesis', () => `${line()}${host}X(a): b\r\n${close}`, unparsable],
    [
      'Content-Length and Transfer-Encoding together (smuggling)',
      () => `${line()}${host}Content-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n`,
      unparsable,
    ],
    ['two different Content-Length values', () => `${line()}${host}Content-Length: 1\r\nContent-Length: 2\r\n\r\nab`, unparsable],
    ['an unknown method', () => `${line('FOO')}${host}${close}`, unparsable],
    ['a lower-case method', () => `${line('get')}${host}${close}`, unparsable],
    ['a TLS ClientHello on the plain port', () => Buffer.from([0x16, 0x03, 0x01, 0x00, 0x05, 0x01, 0x00, 0x00, 0x01, 0x00]), unparsable],
    ['the HTTP/2 connection preface', () => 'PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n', unparsable],
    ['an HTTP/1.1 request without Host', () => `${line()}Authorization: Bearer ${w.token}\r\n${close}`, badHost],
    ['two Host headers', () => `${line()}${host}Host: evil.example\r\nAuthorization: Bearer ${w.token}\r\n${close}`, badHost],
    ['a Host with spaces in it', () => `${line()}Host: a b c\r\nAuthorization: Bearer ${w.token}\r\n${close}`, badHost],
    ['a Host with a slash and a path', () => `${line()}Host: example.com/admin\r\nAuthorization: Bearer ${w.token}\r\n${close}`, badHost],
    ['a Host with a user-info part', () => `${line()}Host: user@example.com\r\nAuthorization: Bearer ${w.token}\r\n${close}`, badHost],
    [
      'a raw non-ASCII Host (not punycode)',
      () => Buffer.from(`${line()}Host: b\xfccher.example\r\nAuthorization: Bearer ${w.token}\r\n${close}`, 'latin1'),
      badHost,
    ],
    ['a Host whose port is not digits', () => `${line()}Host: a:x\r\nAuthorization: Bearer ${w.token}\r\n${close}`, badHost],
    ['a Host with two ports', () => `${line()}Host: a:80:81\r\nAuthorization: Bearer ${w.token}\r\n${close}`, badHost],
    ['a Host with an unclosed IP literal', () => `${line()}Host: [::1\r\nAuthorization: Bearer ${w.token}\r\n${close}`, badHost],
    ['a Host with an empty IP literal', () => `${line()}Host: []:80\r\nAuthorization: Bearer ${w.token}\r\n${close}`, badHost],
    ['a Host with a bracket inside a name', () => `${line()}Host: a]b\r\nAuthorization: Bearer ${w.token}\r\n${close}`, badHost],
    ['a Host with text after its IP literal', () => `${line()}Host: [::1]x\r\nAuthorization: Bearer ${w.token}\r\n${close}`, badHost],
    [
      'CONNECT to tunnel elsewhere',
      () => 'CONNECT evil.example:443 HTTP/1.1\r\nHost: evil.example:443\r\n\r\n',
      { status: 405, code: 'HG_ERR_METHOD_NOT_ALLOWED', headers: { allow: 'GET, HEAD', connection: 'close' } },
    ],
    [
      'an absolute-form target of another scheme',
      () => `${line('GET', 'ftp://evil.example/api/customers/1')}${host}Authorization: Bearer ${w.token}\r\n${close}`,
      badTarget,
    ],
  ];
  for (const [name, payload, expected] of cases) {
    test(`${name}: ${expected.status} ${expected.code}`, async () => {
      assertProblem(await rawAnswer(w.fx.gw.port, payload()), expected);
      await assertStillServes(w.fx.gw.url, w.token);
    });
  }

  test('an absolute-form target naming another host is served as its path here (RFC 9112 section 3.2.2): the authority selects nothing', async () => {
    const answer = await rawAnswer(w.fx.gw.port, `${line('GET', 'http://evil.example/api/customers/1')}${host}Authorization: Bearer ${w.token}\r\n${close}`);
    assert.equal(answer.status, 200, answer.text);
    assert.equal((JSON.parse(answer.text) as { links: { self: string } }).links.self, '/api/customers/1');
  });

  test('Host forms real clients and probes send are served: an IPv6 literal with a zone id (RFC 6874), a trailing dot, upper case, an underscore name, an empty port', async () => {
    for (const value of ['[fe80::1%25eth0]:8080', 'example.com.', 'API.EXAMPLE.COM', '_', 'host:']) {
      const answer = await rawAnswer(w.fx.gw.port, `${line()}Host: ${value}\r\nAuthorization: Bearer ${w.token}\r\n${close}`);
      assert.equal(answer.status, 200, `Host: ${value}`);
    }
  });

  test('an HTTP/1.0 request may leave Host out, but one it sends must be a host', async () => {
    const without = await rawAnswer(w.fx.gw.port, `GET /api/customers/1 HTTP/1.0\r\nAuthorization: Bearer ${w.token}\r\n\r\n`);
    assert.equal(without.status, 200);
    const bad = await rawAnswer(w.fx.gw.port, `GET /api/customers/1 HTTP/1.0\r\nHost: a b c\r\nAuthorization: Bearer ${w.token}\r\n\r\n`);
    assertProblem(bad, badHost);
  });

  test('Host values of every valid shape are served: a name with a port, IPv4, an IPv6 literal, punycode, an empty value', async () => {
    for (const value of ['api.example.com:8443', '127.0.0.1:80', '[::1]:8080', 'xn--bcher-kva.example', '']) {
      const answer = await rawAnswer(w.fx.gw.port, `${line()}Host: ${value}\r\nAuthorization: Bearer ${w.token}\r\n${close}`);
      assert.equal(answer.status, 200, `Host: ${value}`);
    }
  });

  test('an unsafe X-Request-Id (CRLF-free but full of markup) is replaced, never echoed', async () => {
    const res = await get(`${w.fx.gw.url}/api/customers/1`, { authorization: `Bearer ${w.token}`, 'x-request-id': '<script>alert(1)</script>' });
    assert.equal(res.status, 200);
    assert.notEqual(res.headers['x-request-id'], '<script>alert(1)</script>');
    assert.match(String(res.headers['x-request-id']), /^[A-Za-z0-9_-]+$/);
  });

  test('none of the hostile requests reached the upstream with anything but a canonical path', () => {
    for (const path of w.fx.upstream.paths) assert.match(path, /^\/customers\/[1-9]\d*$/);
  });
});

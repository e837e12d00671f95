import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import { request } from 'undici';
import { startFixture, type Fixture } from '../helpers/fixture.ts';
import { bearer, get, parseRaw, rawExchange, send } from '../helpers/gateway.ts';
import { fileByte, startStreamUpstream, type StreamUpstream } from '../helpers/stream-upstream.ts';

/** Routes on a service of their own, declared only here. */
function routes(filesUrl: string): unknown {
  return {
    upstreams: { files: { url: filesUrl, timeoutMs: 2000 } },
    routes: {
      files: { path: '/api/files/{path*}', service: 'files', upstream: '/files/{path*}', scope: 'files:read' },
      chunked: { path: '/api/chunked', service: 'files', upstream: '/chunked', scope: 'files:read' },
      upload: { path: '/api/uploads', methods: ['POST', 'PUT'], service: 'files', upstream: '/upload', scope: 'files:write', maxBodyBytes: 4 * 1024 * 1024 },
      events: { path: '/api/events', service: 'files', upstream: '/events', scope: 'files:read' },
      headers: { path: '/api/echo/{a}/{b}', service: 'files', upstream: '/headers', scope: 'files:read' },
    },
  };
}

/** 16 MiB in 256 KiB chunks, with no length announced: past any route's limit only while it streams. */
async function* tooMuch(): AsyncGenerator<Buffer> {
  for (let i = 0; i < 64; i++) yield Buffer.alloc(256 * 1024, 1);
}

/** Every byte of a generated file's range [start, end) as the upstream writes it. */
function isFileRange(body: Buffer, start: number): boolean {
  for (let i = 0; i < body.length; i++) if (body[i] !== fileByte(start + i)) return false;
  return true;
}

describe('a pass-through route streams both ways', () => {
  let fx: Fixture;
  let files: StreamUpstream;
  let reader: string;
  let writer: string;

  before(async () => {
    files = await startStreamUpstream();
    fx = await startFixture(routes(files.url));
    reader = await fx.token({ claims: { scope: 'files:read' } });
    writer = await fx.token({ claims: { scope: 'files:write' } });
  });
  after(async () => {
    await fx.close();
    await files.close();
  });

  test("a download arrives whole with the upstream's Content-Length, headers and status, and nothing of it is cached or rendered", async () => {
    const res = await request(`${fx.gw.url}/api/files/reports/2024/q1.bin?bytes=300000`, { headers: bearer(reader) });
    const body = Buffer.from(await res.body.arrayBuffer());
    assert.equal(res.statusCode, 200);
    assert.equal(res.headers['content-length'], '300000');
    assert.equal(res.headers['content-type'], 'application/octet-stream');
    assert.equal(res.headers['etag'], '"file-v1"');
    assert.equal(res.headers['x-file-name'], 'reports/2024/q1.bin');
    assert.equal(res.headers['set-cookie'], undefined, 'cookies do not cross the gateway');
    assert.equal(res.headers['cache-status'], undefined);
    assert.match(String(res.headers['x-request-id']), /.+/);
    assert.equal(body.length, 300000);
    assert.ok(isFileRange(body, 0));
    assert.equal(files.seen.at(-1)?.url, '/files/reports/2024/q1.bin?bytes=300000', 'the rest of the path and the query go on as sent');
    assert.equal(fx.gw.gateway.cache.size, 0);
  });

  test("a Range request gets the upstream's 206 with its Content-Range, and HEAD its headers only", async () => {
    const res = await request(`${fx.gw.url}/api/files/a.bin?bytes=10000`, { headers: { ...bearer(reader), range: 'bytes=1000-1999' } });
    const body = Buffer.from(await res.body.arrayBuffer());
    assert.equal(res.statusCode, 206);
    assert.equal(res.headers['content-range'], 'bytes 1000-1999/10000');
    assert.equal(body.length, 1000);
    assert.ok(isFileRange(body, 1000));
    assert.equal(files.seen.at(-1)?.headers.range, 'bytes=1000-1999');
    const head = await request(`${fx.gw.url}/api/files/a.bin?bytes=10000`, { method: 'HEAD', headers: bearer(reader) });
    await head.body.dump();
    assert.equal(head.statusCode, 200);
    assert.equal(head.headers['content-length'], '10000');
    assert.equal(files.seen.at(-1)?.method, 'HEAD');
  });

  test('a chunked answer passes as a stream and reads whole', async () => {
    const res = await get(`${fx.gw.url}/api/chunked`, bearer(reader));
    assert.equal(res.status, 200);
    assert.equal(res.headers['transfer-encoding'], 'chunked');
    assert.equal(res.text, 'one,two,three');
  });

  test("an upload streams to the upstream whole, chunked or with its length, and the upstream's answer comes back", async () => {
    const payload = Buffer.alloc(3 * 1024 * 1024, 7);
    const digest = createHash('sha256').update(payload).digest('hex');
    const withLength = await send(`${fx.gw.url}/api/uploads`, 'POST', { ...bearer(writer), 'content-type': 'application/octet-stream' }, payload);
    assert.equal(withLength.status, 201);
    assert.deepEqual(withLength.json(), {
      bytes: payload.length,
      sha256: digest,
      method: 'POST',
      contentType: 'application/octet-stream',
      transferEncoding: null,
    });
    async function* pieces(): AsyncGenerator<Buffer> {
      for (let i = 0; i < 3; i++) yield payload.subarray(i * 1024 * 1024, (i + 1) * 1024 * 1024);
    }
    const chunked = await request(`${fx.gw.url}/api/uploads`, { method: 'PUT', headers: bearer(writer), body: Readable.from(pieces()) });
    assert.equal(chunked.statusCode, 201);
    assert.deepEqual(await chunked.body.json(), { bytes: payload.length, sha256: digest, method: 'PUT', contentType: null, transferEncoding: 'chunked' });
  });

  test('a body past maxBodyBytes is a 413 problem and the upstream request is cut', async () => {
    const declared = await send(`${fx.gw.url}/api/uploads`, 'POST', bearer(writer), Buffer.alloc(4 * 1024 * 1024 + 1));
    assert.equal(declared.status, 413);
    assert.match(String(declared.headers['content-type']), /application\/problem\+json/);
    assert.match(declared.text, /routes\.upload\.maxBodyBytes/);
    const before = files.seen.length;
    const streamed = await request(`${fx.gw.url}/api/uploads`, { method: 'POST', headers: bearer(writer), body: Readable.from(tooMuch()) });
    assert.equal(streamed.statusCode, 413);
    assert.equal(((await streamed.body.json()) as { code: string }).code, 'HG_ERR_PAYLOAD_TOO_LARGE');
    assert.equal(files.seen.length, before + 1, 'the streamed one had begun');
  });

  test('server-sent events reach the client one by one while the upstream stream is open', async () => {
    const res = await request(`${fx.gw.url}/api/events`, { headers: { ...bearer(reader), accept: 'text/event-stream' } });
    assert.equal(res.statusCode, 200);
    assert.equal(res.headers['content-type'], 'text/event-stream');
    const reading = res.body[Symbol.asyncIterator]();
    for (const n of [1, 2, 3]) {
      await files.sendEvent(`event ${n}`);
      let text = '';
      while (!text.endsWith('\n\n')) text += String((await reading.next()).value);
      assert.equal(text, `data: event ${n}\n\n`, 'each event arrives before the next is sent');
    }
    assert.equal(files.openEvents(), 1, 'the upstream has not ended');
    files.endEvents();
    assert.equal((await reading.next()).done, true);
  });

  test("only end-to-end headers pass: no hop-by-hop fields, credentials or cookies upstream, and X-Request-Id is the gateway's both ways", async () => {
    const head = [
      'GET /api/echo/x/y?q=1&q=2 HTTP/1.1',
      'Host: gateway',
      `Authorization: Bearer ${reader}`,
      'Cookie: session=abc',
      'Connection: close, X-Private',
      'X-Private: hop',
      'X-Custom: kept',
      'X-Request-Id: client-id-1',
      'TE: trailers',
      'X-Forwarded-For: 6.6.6.6',
      'Accept: text/plain',
    ];
    const raw = parseRaw((await rawExchange(fx.gw.port, `${head.join('\r\n')}\r\n\r\n`)).text);
    assert.equal(raw.status, 200);
    const headerOf = (name: string): string | undefined => new RegExp(`^${name}: (.*)$`, 'im').exec(raw.head)?.[1];
    const seen = JSON.parse(raw.body) as { url: string; headers: Record<string, string> };
    const res = {
      headers: {
        'x-request-id': headerOf('x-request-id'),
        'x-hop': headerOf('x-hop'),
        'keep-alive': headerOf('keep-alive'),
        'x-end-to-end': headerOf('x-end-to-end'),
      },
    };
    assert.equal(seen.url, '/headers?q=1&q=2');
    for (const name of ['authorization', 'cookie', 'x-private', 'te', 'x-forwarded-for']) assert.equal(seen.headers[name], undefined, name);
    assert.equal(seen.headers['x-custom'], 'kept');
    assert.equal(seen.headers['accept'], 'text/plain', "the client's Accept, not the JSON one resources ask for");
    assert.equal(seen.headers['x-request-id'], 'client-id-1');
    assert.equal(res.headers['x-request-id'], 'client-id-1');
    assert.equal(res.headers['x-hop'], undefined, "named in the upstream's Connection");
    assert.equal(res.headers['keep-alive'], undefined);
    assert.equal(res.headers['x-end-to-end'], 'kept');
  });
});

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import type { TLSSocket } from 'node:tls';
import { after, before, describe, test } from 'node:test';
import { startFixture } from '../helpers/fixture.ts';
import { bearer, get, problemOf } from '../helpers/gateway.ts';
import { captureLog } from '../helpers/log.ts';
import { makeTestCa, type Issued, type TestCa } from '../helpers/test-ca.ts';

interface HttpsUpstream {
  readonly url: string;
  /** The common name of each client certificate the upstream was shown, in order ('' for none). */
  readonly clientNames: string[];
  close(): Promise<void>;
}

/** A real https customer service with `issued` as its certificate; `clientCa`: it requires a client certificate from that authority. */
async function startHttpsUpstream(issued: Issued, clientCa?: string): Promise<HttpsUpstream> {
  const clientNames: string[] = [];
  const server: Server = createServer(
    {
      cert: readFileSync(issued.cert),
      key: readFileSync(issued.key),
      ...(clientCa === undefined ? {} : { ca: readFileSync(clientCa), requestCert: true, rejectUnauthorized: true }),
    },
    (req, res) => {
      const peer = (req.socket as TLSSocket).getPeerCertificate();
      clientNames.push(typeof peer.subject?.CN === 'string' ? peer.subject.CN : '');
      const id = Number(/\/customers\/(\d+)/.exec(req.url ?? '')?.[1] ?? 0);
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ id, name: `Customer ${id}`, status: 'active' }));
    },
  );
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `https://127.0.0.1:${port}`,
    clientNames,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

describe('TLS to upstream services', () => {
  let ca: TestCa;
  let otherCa: TestCa;
  const upstreams: HttpsUpstream[] = [];
  const start = async (issued: Issued, clientCa?: string) => {
    const up = await startHttpsUpstream(issued, clientCa);
    upstreams.push(up);
    return up;
  };

  /** One read through a gateway whose default service is `url` with these `tls` keys; the log lines of its failure. */
  async function readThrough(url: string, tls: Record<string, unknown>) {
    const log = captureLog();
    const fx = await startFixture({ upstream: { url, tls } }, { logger: log.logger });
    try {
      const res = await get(`${fx.gw.url}/api/customers/7`, bearer(await fx.token()));
      return { res, failures: log.records().filter((r) => r['msg'] === 'request failed') };
    } finally {
      await fx.close();
    }
  }

  before(() => {
    ca = makeTestCa();
    otherCa = makeTestCa();
  });
  after(async () => {
    await Promise.all(upstreams.map((u) => u.close()));
    ca.remove();
    otherCa.remove();
  });

  test('a certificate from the configured authority, for the address, is accepted', async () => {
    const up = await start(ca.issue('good', ['127.0.0.1']));
    const { res } = await readThrough(up.url, { ca: ca.caFile });
    assert.equal(res.status, 200);
    assert.equal((res.json() as { name: string }).name, 'Customer 7');
  });

  test('a certificate from another authority is refused with upstream-tls, its reason logged and not shown', async () => {
    const up = await start(otherCa.issue('stranger', ['127.0.0.1']));
    const { res, failures } = await readThrough(up.url, { ca: ca.caFile });
    assert.equal(res.status, 502);
    const problem = problemOf(res);
    assert.equal(problem.code, 'HG_ERR_UPSTREAM_TLS');
    assert.equal(problem.type, 'urn:hypergate:problem:upstream-tls');
    assert.doesNotMatch(JSON.stringify(problem), /certificate|CERT|127\.0\.0\.1/);
    assert.match(String(failures[0]?.['tlsError']), /UNABLE_TO_VERIFY_LEAF_SIGNATURE|unable to verify/);
  });

  test('a certificate for another name is refused, and accepted when tls.servername names it', async () => {
    const up = await start(ca.issue('elsewhere', ['api.internal.test']));
    const refused = await readThrough(up.url, { ca: ca.caFile });
    assert.equal(refused.res.status, 502);
    assert.equal(problemOf(refused.res).code, 'HG_ERR_UPSTREAM_TLS');
    assert.match(String(refused.failures[0]?.['tlsError']), /ERR_TLS_CERT_ALTNAME_INVALID/);
    const named = await readThrough(up.url, { ca: ca.caFile, servername: 'api.internal.test' });
    assert.equal(named.res.status, 200);
  });

  test('an expired certificate is refused', async () => {
    const up = await start(ca.issue('expired', ['127.0.0.1'], { expired: true }));
    const { res, failures } = await readThrough(up.url, { ca: ca.caFile });
    assert.equal(res.status, 502);
    assert.equal(problemOf(res).code, 'HG_ERR_UPSTREAM_TLS');
    assert.match(String(failures[0]?.['tlsError']), /CERT_HAS_EXPIRED/);
  });

  test('a service that requires a client certificate refuses the gateway without one, and accepts the one configured', async () => {
    const up = await start(ca.issue('strict', ['127.0.0.1']), ca.caFile);
    const without = await readThrough(up.url, { ca: ca.caFile });
    assert.equal(without.res.status, 502);
    const client = ca.issue('hypergate-client', ['hypergate.test'], { client: true });
    const withCert = await readThrough(up.url, { ca: ca.caFile, cert: client.cert, key: client.key });
    assert.equal(withCert.res.status, 200);
    assert.deepEqual(up.clientNames, ['hypergate-client']);
  });

  test('verification is off only by tls.rejectUnauthorized: false', async () => {
    const up = await start(otherCa.issue('unverified', ['127.0.0.1']));
    assert.equal((await readThrough(up.url, {})).res.status, 502);
    assert.equal((await readThrough(up.url, { rejectUnauthorized: false })).res.status, 200);
  });

  test('a client certificate without its key stops the start, naming the keys', async () => {
    const client = ca.issue('lonely', ['hypergate.test'], { client: true });
    await assert.rejects(startFixture({ upstream: { url: 'https://127.0.0.1:1', tls: { cert: client.cert } } }), /upstream\.tls: cert and key go together/);
  });
});

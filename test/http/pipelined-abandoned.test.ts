import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { describe, test } from 'node:test';
import { suiteFixture } from '../helpers/hostile.ts';
import { sample } from '../helpers/metrics.ts';
import { gate, waitFor } from '../helpers/wait.ts';

/**
 * node:http answers pipelined requests in order: an answer behind one still pending waits in a
 * queue without the connection. When the client closes the connection, node:http emits 'close'
 * only on the answer that holds it; the queued ones never get one. Each must still be counted out
 * of hypergate_http_requests_in_flight and recorded (499: the client went away), or the gauge
 * climbs for ever and the access log loses them.
 */
describe('pipelined requests on a connection the client closes', () => {
  const w = suiteFixture();
  const get = (id: number): string => `GET /api/customers/${id} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${w.token}\r\n\r\n`;

  test('the answers queued behind a pending one leave the in-flight gauge and are counted as 499', async () => {
    const metrics = w.fx.gw.gateway.metrics;
    const upstream = gate();
    for (const id of [30, 31, 32])
      w.fx.upstream.on(`/customers/${id}`, { kind: 'wait', until: upstream.promise, then: { kind: 'json', body: { id, name: `C${id}`, status: 'active' } } });
    const before =
      sample(await metrics.registry.metrics(), 'hypergate_http_requests_total', { route: '/api/customers/:id', method: 'GET', status: '499' }) ?? 0;
    const socket = connect(w.fx.gw.port, '127.0.0.1');
    socket.on('error', () => {});
    socket.write(get(30) + get(31) + get(32));
    await waitFor(() => metrics.inFlight === 3 && w.fx.upstream.active() === 3, 'three requests in flight at the upstream');
    const closed = new Promise((resolve) => socket.on('close', resolve));
    socket.destroy();
    await closed;
    upstream.open();
    await waitFor(() => w.fx.upstream.active() === 0, 'the upstream answered');
    await waitFor(() => metrics.inFlight === 0, 'no request in flight', 3000);
    const after = sample(await metrics.registry.metrics(), 'hypergate_http_requests_total', { route: '/api/customers/:id', method: 'GET', status: '499' }) ?? 0;
    assert.equal(after - before, 3);
  });
});

/**
 * The sample upstream (src/sample-upstream) in its own process, as the gateway's upstream in the
 * benchmarks. It counts the requests it answers; the harness reads the count over IPC (no extra
 * endpoint, nothing in src/), e.g. to check that a herd made exactly one upstream request.
 *
 *   node --import tsx bench/servers/upstream.ts <port> <customers>
 */
import { createSampleUpstreamServer } from '../../src/sample-upstream/server.ts';

const port = Number(process.argv[2]);
const customers = Number(process.argv[3] ?? 100_000);
const server = createSampleUpstreamServer(customers);
server.keepAliveTimeout = 10_000; // outlive the gateway pool's idle time-out, as startSampleUpstream does
let requests = 0;
// A second 'request' listener: the sample server's own listener answers, this one only counts.
server.on('request', () => {
  requests++;
});
process.on('message', (message: { type?: string }) => {
  if (message.type === 'count') process.send?.({ type: 'count', requests });
});
process.on('disconnect', () => process.exit(0));
server.listen(port, '127.0.0.1');

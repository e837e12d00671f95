/**
 * Benchmark a running hypergate with your own autocannon script: a starting point to copy.
 *
 *   npm start                                    # terminal 1: dev auth mode, sample upstream
 *   TOKEN=$(npm run -s token) node --import tsx bench/autocannon-example.ts   # terminal 2
 *
 * Options (environment): URL (default http://127.0.0.1:8080), TOKEN (required), CUSTOMERS (how
 * many customers to rotate over, default 1000), CONNECTIONS (100), DURATION (seconds, 10).
 *
 * Keep in mind: autocannon runs on one core and saturates near 30k-35k req/s, so near the
 * ceiling it measures itself; run it on another core than the gateway (taskset -c 1 node ...)
 * and use wrk for ceiling figures (`npm run bench`). Any error or non-2xx answer makes this
 * exit 1: a figure from failed requests is not a figure.
 */
import autocannon from 'autocannon';

const url = process.env['URL'] ?? 'http://127.0.0.1:8080';
const token = process.env['TOKEN'];
const customers = Number(process.env['CUSTOMERS'] ?? 1000);
if (token === undefined || token === '') {
  process.stderr.write('TOKEN is required: TOKEN=$(npm run -s token) node --import tsx bench/autocannon-example.ts\n');
  process.exit(2);
}

let next = 0;
const result = await autocannon({
  url,
  connections: Number(process.env['CONNECTIONS'] ?? 100),
  duration: Number(process.env['DURATION'] ?? 10),
  headers: { accept: 'application/json', authorization: `Bearer ${token}` },
  requests: [
    {
      method: 'GET',
      // One customer after another: the first round fills the cache, the rest are hits.
      setupRequest: (req: autocannon.Request) => ({ ...req, path: `/api/customers/${(next++ % customers) + 1}` }),
    },
  ],
});

process.stdout.write(autocannon.printResult(result));
const bad = result.errors + result.timeouts + result.non2xx;
if (bad > 0) {
  process.stderr.write(`\n${bad} errors, time-outs or non-2xx answers: check the token (npm run token) and the URL\n`);
  process.exit(1);
}

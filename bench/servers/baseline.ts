/**
 * The baseline, our ceiling: bare node:http writing the bytes and headers a hypergate cache hit
 * writes, captured from a real hypergate answer at start-up (see capture.ts), so the two cannot
 * drift apart. Every request gets the same answer; one with If-None-Match gets the captured 304.
 *
 * The harness compiles it (bench/tsconfig.servers.json) and runs it with hypergate's production
 * Node flags, so the ratio compares servers, not loaders or flags:
 *
 *   node <flags of npm start> dist-bench/servers/baseline.js <port> <capture.json>
 */
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { Capture } from '../lib/capture.ts';

const port = Number(process.argv[2]);
const capture = JSON.parse(readFileSync(process.argv[3] as string, 'utf8')) as Capture;
const okHeaders = capture.ok.headers;
// Written as a string, as hypergate writes a cached body (src/cache/representation.ts).
const body = Buffer.from(capture.ok.body, 'base64').toString('utf8');
const notModifiedHeaders = capture.notModified.headers;

createServer((req, res) => {
  if (req.headers['if-none-match'] !== undefined) {
    res.writeHead(304, notModifiedHeaders);
    res.end();
    return;
  }
  res.writeHead(200, okHeaders);
  res.end(body);
}).listen(port, '127.0.0.1');

// The harness stops it with SIGKILL; --profile with SIGTERM, on which `node --cpu-prof` writes its profile only through a normal exit.
process.on('SIGTERM', () => process.exit(0));

import { parseArgs } from '../lib/cli-args.ts';
import { startSampleUpstream } from './server.ts';

/**
 * The sample customer service on its own. A gateway without upstream.url runs one in its own
 * process, so its writes are seen by it alone; instances that must see one another's writes (the
 * cluster example, deploy/cluster/run.sh) share this one through HYPERGATE_UPSTREAM_URL.
 */
const USAGE = `usage: node dist/sample-upstream/main.js [--port PORT] [--customers COUNT]

  --port PORT         listen on 127.0.0.1:PORT (default 0: any free port; the line it prints names it)
  --customers COUNT   customers 1..COUNT (default 100000, as sampleUpstream.customers)

Prints {"event":"listening","url":...} once it listens; SIGTERM or SIGINT stops it.`;

/** A whole number from min to max, or the reason it is not. */
function whole(name: string, text: string | true | undefined, fallback: number, min: number, max: number): number {
  if (text === undefined) return fallback;
  const value = Number(text);
  if (typeof text !== 'string' || !/^\d{1,9}$/.test(text) || value < min || value > max)
    throw new Error(`${name}: expected a whole number from ${min} to ${max}`);
  return value;
}

async function main(): Promise<void> {
  const args = parseArgs(process.argv.slice(2), ['--port', '--customers'], ['--help']);
  if (args.has('--help')) {
    process.stdout.write(`${USAGE}\n`);
    return;
  }
  const port = whole('--port', args.get('--port'), 0, 0, 65_535);
  const customers = whole('--customers', args.get('--customers'), 100_000, 1, 10_000_000);
  const sample = await startSampleUpstream(customers, port);
  process.stdout.write(`${JSON.stringify({ event: 'listening', url: sample.url, customers })}\n`);
  const stop = (): void => void sample.close().then(() => process.exit(0));
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
}

main().catch((err: unknown) => {
  process.stderr.write(`sample-upstream: ${(err as Error).message}\n${USAGE}\n`);
  process.exit(1);
});

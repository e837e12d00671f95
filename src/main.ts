import { ConfigError } from './config/validate.ts';
import { loadConfig } from './config/load.ts';
import { KeySourceError } from './auth/keys.ts';
import { mintDevToken } from './auth/mint.ts';
import { createGateway, type Gateway } from './gateway.ts';
import { createLogger } from './observability/logger.ts';
import { parseArgs } from './cli-args.ts';

const USAGE = `usage: hypergate [--config FILE]

  --config FILE   JSON file loaded over config/default.json (see README "Configuration")
  --help          this text

Environment: HYPERGATE_PORT, HYPERGATE_HOST and HYPERGATE_UPSTREAM_URL override their keys.`;

function die(lines: readonly string[]): never {
  for (const line of lines) process.stderr.write(`hypergate: ${line}\n`);
  process.exit(1);
}

async function printDevBanner(gateway: Gateway, baseUrl: string): Promise<void> {
  const keys = gateway.keySource.devKeys;
  if (keys === undefined) return;
  const { auth } = gateway.config;
  const token = await mintDevToken(keys, { sub: 'dev-user', scope: auth.requiredScope, ttlSeconds: 3600, issuer: auth.issuer, audience: auth.audience });
  process.stderr.write(
    [
      '',
      '  !! DEV AUTH MODE: no key source is configured (auth.jwksUrl, auth.jwksFile, auth.publicKeyFile or auth.secret).',
      `  !! Tokens are checked against a local key in ${keys.dir}. Do not run this in production.`,
      '',
      '  Try it (this token is valid for one hour; mint more with `npm run token`):',
      '',
      `  curl -i -H 'Authorization: Bearer ${token}' ${baseUrl}/api/customers/42`,
      '',
      '',
    ].join('\n'),
  );
}

async function main(): Promise<void> {
  let args: Map<string, string | true>;
  try {
    args = parseArgs(process.argv.slice(2), ['--config'], ['--help']);
  } catch (err) {
    die([(err as Error).message, USAGE]);
  }
  if (args.has('--help')) {
    process.stdout.write(`${USAGE}\n`);
    return;
  }
  const file = args.get('--config');
  let config;
  try {
    config = loadConfig({ file: typeof file === 'string' ? file : undefined, env: process.env });
  } catch (err) {
    if (err instanceof ConfigError) die(['invalid configuration, not starting:', ...err.problems.map((p) => `  ${p}`)]);
    throw err;
  }
  const logger = createLogger(config.log.level);

  let gateway: Gateway;
  try {
    gateway = await createGateway(config, { logger });
  } catch (err) {
    if (err instanceof KeySourceError) die([err.message]);
    throw err;
  }
  let address;
  try {
    address = await gateway.listen();
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    const where = `${config.server.host}:${config.server.port}`;
    await gateway.close(0);
    if (code === 'EADDRINUSE') die([`cannot listen on ${where}: the address is already in use (set server.port or HYPERGATE_PORT)`]);
    if (code === 'EACCES') die([`cannot listen on ${where}: permission denied`]);
    die([`cannot listen on ${where}: ${code ?? (err as Error).message}`]);
  }
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  const baseUrl = `http://${host}:${address.port}`;
  logger.info(`listening on ${baseUrl}`, { event: 'listening', port: address.port });
  logger.info(`upstream ${gateway.upstreamUrl}${gateway.embeddedUpstream ? ' (embedded sample customer service)' : ''}`, { event: 'upstream' });
  logger.info(`auth ${gateway.keySource.description}`, { event: 'auth', mode: gateway.keySource.mode });
  if (gateway.keySource.mode === 'dev') logger.warn('DEV AUTH MODE: not for production', { event: 'dev-auth' });
  await printDevBanner(gateway, baseUrl);

  let stopping = false;
  const stop = (signal: NodeJS.Signals): void => {
    if (stopping) {
      logger.warn('second signal: exiting now', { event: 'shutdown', signal });
      process.exit(1);
    }
    stopping = true;
    logger.info('shutting down: draining in-flight requests', { event: 'shutdown', signal, drainTimeoutMs: config.server.drainTimeoutMs });
    gateway.close().then(
      () => {
        logger.info('stopped', { event: 'stopped' });
        process.exit(0);
      },
      (err: unknown) => {
        logger.error('error while stopping', { event: 'stopped', error: (err as Error).message });
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}

main().catch((err: unknown) => {
  process.stderr.write(`hypergate: failed to start: ${(err as Error).message}\n`);
  process.exit(1);
});

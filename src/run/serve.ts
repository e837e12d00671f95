import cluster from 'node:cluster';
import { AggregatorRegistry } from 'prom-client';
import { KeySourceError } from '../auth/keys.ts';
import { mintDevToken } from '../auth/mint.ts';
import type { Config } from '../config/types.ts';
import { createGateway, type Gateway } from '../gateway.ts';
import type { Logger } from '../observability/logger.ts';
import type { PrimaryMessage, WorkerMessage } from './messages.ts';
import { reloadGateway, type ConfigSource } from './reload.ts';

export function die(lines: readonly string[], logger?: Logger): never {
  logger?.flush?.();
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

function send(message: WorkerMessage): void {
  process.send?.(message);
}

/**
 * Runs one gateway in this process: the whole of hypergate with server.workers = 1, or one
 * worker of a cluster (then the primary owns the admin listener and talks to us over IPC).
 */
export async function serve(config: Config, source: ConfigSource, logger: Logger, overrides?: (c: Config) => Config): Promise<void> {
  const worker = cluster.isWorker;
  let gateway: Gateway;
  try {
    gateway = await createGateway(config, { logger });
  } catch (err) {
    if (err instanceof KeySourceError) die([err.message], logger);
    throw err;
  }
  if (worker) {
    new AggregatorRegistry(); // installs prom-client's worker-side listener for the primary's scrapes
    AggregatorRegistry.setRegistries([gateway.metrics.registry]);
  }
  // Access lines wait up to 100 ms for their batch. Some exits are not ours to flush before: a
  // cluster worker whose primary died is ended by Node itself (process.exit on the IPC
  // disconnect), and an uncaught exception ends any process. 'exit' runs in all of them.
  process.once('exit', () => logger.flush?.());
  // Signals are handled from here on, before listening: a SIGTERM that arrives while the
  // listener opens (a cluster stopping a worker it just started) drains instead of killing.
  let stopping = false;
  const stop = (signal: string): void => {
    if (stopping) {
      logger.warn('second signal: exiting now', { event: 'shutdown', signal });
      logger.flush?.();
      process.exit(1);
    }
    stopping = true;
    const drainTimeoutMs = gateway.config.server.drainTimeoutMs;
    logger.info('shutting down: draining in-flight requests', { event: 'shutdown', signal, drainTimeoutMs });
    // server.drainTimeoutMs bounds the whole stop, not only the client connections: past it the
    // process ends at once, even with upstream requests still hanging. Exit 1 says requests were cut.
    const deadline = setTimeout(() => {
      const unfinished = gateway.metrics.inFlight;
      logger.warn('drain time-out: exiting', { event: 'stopped', unfinished, drainTimeoutMs });
      logger.flush?.();
      process.exit(unfinished > 0 ? 1 : 0);
    }, drainTimeoutMs);
    gateway.close(drainTimeoutMs).then(
      () => {
        clearTimeout(deadline);
        logger.info('stopped', { event: 'stopped' });
        logger.flush?.();
        process.exit(0);
      },
      (err: unknown) => {
        clearTimeout(deadline);
        logger.error('error while stopping', { event: 'stopped', error: (err as Error).message });
        logger.flush?.();
        process.exit(1);
      },
    );
  };
  let reloading: Promise<boolean> = Promise.resolve(true);
  const reload = (): Promise<boolean> => {
    reloading = reloading.then(() => reloadGateway(gateway, source, logger, overrides));
    return reloading;
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
  process.on('SIGHUP', () => {
    logger.info('SIGHUP: reloading config and keys', { event: 'reload' });
    void reload();
  });
  let address;
  try {
    address = await gateway.listen();
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    const where = (err as { where?: string }).where ?? `${config.server.host}:${config.server.port}`;
    await gateway.close(0);
    if (code === 'EADDRINUSE') die([`cannot listen on ${where}: the address is already in use (set server.port or HYPERGATE_SERVER_PORT; admin.port or HYPERGATE_ADMIN_PORT)`], logger);
    if (code === 'EACCES') die([`cannot listen on ${where}: permission denied`], logger);
    die([`cannot listen on ${where}: ${code ?? (err as Error).message}`], logger);
  }
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  const baseUrl = `http://${host}:${address.port}`;
  logger.info(`listening on ${baseUrl}`, { event: 'listening', port: address.port, worker: worker ? cluster.worker?.id : undefined });
  const admin = gateway.adminAddress();
  if (admin !== null) logger.info(`admin listener on http://${admin.address}:${admin.port} (/healthz, /readyz, /metrics, DELETE /cache)`, { event: 'admin-listening', port: admin.port });
  logger.info(`upstream ${gateway.upstreamUrl}${gateway.embeddedUpstream ? ' (embedded sample customer service)' : ''}`, { event: 'upstream' });
  logger.info(`auth ${gateway.keySource.description}`, { event: 'auth', mode: gateway.keySource.mode });
  if (gateway.keySource.mode === 'dev') logger.warn('DEV AUTH MODE: not for production', { event: 'dev-auth' });
  if (!worker || cluster.worker?.id === 1) await printDevBanner(gateway, baseUrl);
  send({ type: 'ready', port: address.port });

  if (worker) {
    process.on('message', (message: PrimaryMessage) => {
      switch (message.type) {
        case 'reload':
          void reload().then((ok) => send({ type: 'reloaded', seq: message.seq, ok }));
          return;
        case 'purge':
          gateway.purge(message.path).then(
            (result) => send({ type: 'purged', seq: message.seq, ...result }),
            () => send({ type: 'purged', seq: message.seq, purged: null }),
          );
          return;
        case 'readiness':
          send({ type: 'readiness', seq: message.seq, reason: gateway.readiness() });
          return;
      }
    });
  }
}

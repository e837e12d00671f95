import cluster from 'node:cluster';
import { implicitVaryNotes } from '../config/vary.ts';
import { AggregatorRegistry } from 'prom-client';
import { KeySourceError } from '../auth/keys.ts';
import { mintDevToken } from '../auth/mint.ts';
import { redactUrl } from '../config/redact.ts';
import { servicesOf } from '../config/service-checks.ts';
import type { Config, UpstreamConfig } from '../config/types.ts';
import { createGateway, type Gateway } from '../gateway/create-gateway.ts';
import { reloadProblems } from '../gateway/reload.ts';
import type { Logger } from '../observability/logger.ts';
import { die, exitAfterLogs } from './exit.ts';
import { CURSOR_KEY_VARIABLE } from './messages.ts';
import type { PrimaryMessage, WorkerMessage } from './messages.ts';
import { pidFileProblem, writePidFile } from './pid-file.ts';
import { rereader, type ConfigSource } from './reload.ts';

/**
 * The scopes of the dev banner's token: every resource's read scope, and the write scope of each
 * that takes writes, so a first try can read and change what the config declares (the key is a
 * local dev key; a real key source never gets here).
 */
function devScope(config: Config): string {
  const scopes = new Set([config.auth.requiredScope]);
  for (const [name, resource] of Object.entries(config.resources)) {
    scopes.add(resource.scope ?? config.auth.requiredScope);
    if (resource.methods.some((m) => m !== 'GET')) scopes.add(resource.writeScope ?? `${name}:write`);
  }
  return [...scopes].join(' ');
}

/** The item path of customers in config/default.json. */
const SHIPPED_CUSTOMER_PATH = '/api/customers/{id}';

async function printDevBanner(gateway: Gateway, baseUrl: string): Promise<void> {
  const keys = gateway.keySource.devKeys;
  if (keys === undefined) return;
  const { auth } = gateway.config;
  const token = await mintDevToken(keys, { sub: 'dev-user', scope: devScope(gateway.config), ttlSeconds: 3600, issuer: auth.issuer, audience: auth.audience });
  const customers = gateway.config.resources['customers'];
  // The shipped customers when the config keeps them as shipped; else the API root, which links to whatever it declares.
  const shipped = customers?.path === SHIPPED_CUSTOMER_PATH;
  const tryPath = shipped ? '/api/customers/42' : '/api';
  // With the shipped resource table customers take PATCH (RFC 7396) and need If-Match; `*` matches whatever is current.
  const change =
    shipped && customers?.methods.includes('PATCH') === true
      ? [
          '  Change it (JSON merge patch; If-Match: * accepts whatever version is current):',
          '',
          `  curl -i -X PATCH -H 'Authorization: Bearer ${token}' -H 'Content-Type: application/merge-patch+json' -H 'If-Match: *' -d '{"status":"active"}' ${baseUrl}/api/customers/42`,
          '',
        ]
      : [];
  process.stderr.write(
    [
      '',
      '  !! DEV AUTH MODE: no key source is configured (auth.jwksUrl, auth.jwksFile, auth.publicKeyFile or auth.secret).',
      `  !! Tokens are checked against a local key in ${keys.dir}. Do not run this in production.`,
      '',
      '  Try it (this token is valid for one hour; mint more with `npm run token`):',
      '',
      `  curl -i -H 'Authorization: Bearer ${token}' ${baseUrl}${tryPath}`,
      '',
      ...change,
      '',
    ].join('\n'),
  );
}

/**
 * Sends to the primary. The primary may be gone (it exits when another worker fails to start):
 * with a callback, a closed channel or a failed write (EPIPE) is handed to it instead of being
 * emitted as an 'error' nobody handles. Node ends a worker whose channel closes.
 */
function send(message: WorkerMessage): void {
  process.send?.(message, undefined, undefined, () => {});
}

/**
 * Runs one gateway in this process: the whole of hypergate with server.workers = 1, or one
 * worker of a cluster (then the primary owns the admin listener and talks to us over IPC).
 */
export async function serve(config: Config, source: ConfigSource, logger: Logger, overrides?: (c: Config) => Config): Promise<void> {
  const worker = cluster.isWorker;
  // Node's own cluster messages (a listen request, say) have no callback: a write to a primary
  // that has already exited is emitted as 'error' on the worker, and unhandled it printed a stack
  // trace over the primary's one-line start-up error. The disconnect that follows ends the worker.
  cluster.worker?.on('error', (err: Error) => logger.debug('cannot reach the cluster primary', { event: 'cluster', error: err.message }));
  let gateway: Gateway;
  try {
    const given = worker ? process.env[CURSOR_KEY_VARIABLE] : undefined;
    const cursorKey = given === undefined ? undefined : Buffer.from(given, 'base64url');
    gateway = await createGateway(config, { logger, reread: rereader(source, overrides), ...(cursorKey === undefined ? {} : { cursorKey }) });
  } catch (err) {
    if (err instanceof KeySourceError) die([err.message], logger);
    throw err;
  }
  if (worker) {
    new AggregatorRegistry(); // installs prom-client's worker-side listener for the primary's scrapes
    AggregatorRegistry.setRegistries([gateway.metrics.registry]);
  }
  // Access lines wait up to 100 ms for their batch. Some exits are not ours to wait in: a
  // cluster worker whose primary died is ended by Node itself (process.exit on the IPC
  // disconnect), and an uncaught exception ends any process. 'exit' runs in all of them; what
  // stdout takes at once is written then.
  process.once('exit', () => logger.flush?.());
  // Signals are handled from here on, before listening: a SIGTERM that arrives while the
  // listener opens (a cluster stopping a worker it just started) drains instead of killing.
  let stopping = false;
  const stop = (signal: string): void => {
    if (stopping) {
      logger.warn('second signal: exiting now', { event: 'shutdown', signal });
      void exitAfterLogs(logger, 1);
      return;
    }
    stopping = true;
    const drainTimeoutMs = gateway.config.server.drainTimeoutMs;
    // server.drainTimeoutMs bounds the whole stop, not only the client connections: past it the
    // process ends at once, even with upstream requests still hanging. Exit 1 says requests were cut.
    // Armed before close() arms the drain's own cut of the same length: timers of one length fire
    // in the order they were set, so this one counts the requests before that cut ends them.
    const deadline = setTimeout(() => {
      const unfinished = gateway.metrics.inFlight;
      logger.warn('drain time-out: exiting', { event: 'stopped', unfinished, drainTimeoutMs });
      void exitAfterLogs(logger, unfinished > 0 ? 1 : 0);
    }, drainTimeoutMs);
    // The listener closes within close(), before the line goes out: whoever reads the line and
    // connects is refused, however the two processes are scheduled.
    const closed = gateway.close(drainTimeoutMs);
    logger.info('shutting down: draining in-flight requests', { event: 'shutdown', signal, drainTimeoutMs });
    closed.then(
      () => {
        clearTimeout(deadline);
        logger.info('stopped', { event: 'stopped' });
        void exitAfterLogs(logger, 0);
      },
      (err: unknown) => {
        clearTimeout(deadline);
        logger.error('error while stopping', { event: 'stopped', error: (err as Error).message });
        void exitAfterLogs(logger, 1);
      },
    );
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
  process.on('SIGHUP', () => {
    logger.info('SIGHUP: reloading config and keys', { event: 'reload' });
    // The reloader logs every outcome; nobody waits for this one.
    gateway.reloadFromSource().catch(() => {});
  });
  const { pidFile } = config.server;
  if (!worker && pidFile !== null) {
    try {
      writePidFile(pidFile);
    } catch (err) {
      await gateway.close(0);
      die([pidFileProblem(pidFile, err)], logger);
    }
  }
  let address;
  try {
    address = await gateway.listen();
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    const where = (err as { where?: string }).where ?? `${config.server.host}:${config.server.port}`;
    await gateway.close(0);
    if (code === 'EADDRINUSE')
      die([`cannot listen on ${where}: the address is already in use (set server.port or HYPERGATE_SERVER_PORT; admin.port or HYPERGATE_ADMIN_PORT)`], logger);
    if (code === 'EACCES') die([`cannot listen on ${where}: permission denied`], logger);
    if (code === 'EADDRNOTAVAIL')
      die(
        [
          `cannot listen on ${where}: no network interface of this machine has that address (set server.host or HYPERGATE_SERVER_HOST; admin.host or HYPERGATE_ADMIN_HOST)`,
        ],
        logger,
      );
    die([`cannot listen on ${where}: ${code ?? (err as Error).message}`], logger);
  }
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  const baseUrl = `http://${host}:${address.port}`;
  logger.info(`listening on ${baseUrl}`, { event: 'listening', port: address.port });
  const admin = gateway.adminAddress();
  if (admin !== null)
    logger.info(`admin listener on http://${admin.address}:${admin.port} (/healthz, /readyz, /metrics, DELETE /cache, POST /reload)`, {
      event: 'admin-listening',
      port: admin.port,
    });
  // Printed URLs never carry credentials (docs/configuration.md), whatever a key will allow.
  const upstreamUrl = gateway.upstreamUrl;
  if (gateway.config.upstream.targets.length > 0) logTargets(logger, 'upstream', 'upstream', gateway.config.upstream);
  else if (upstreamUrl === null) logger.info('upstream not set (no resource reads from the default service)', { event: 'upstream' });
  else logger.info(`upstream ${redactUrl(upstreamUrl)}${gateway.embeddedUpstream ? ' (embedded sample customer service)' : ''}`, { event: 'upstream' });
  for (const [name, service] of Object.entries(gateway.config.upstreams)) {
    if (service.targets.length > 0) logTargets(logger, `upstream ${name}`, name, service);
    else logger.info(`upstream ${name} ${service.url === null ? '(no url)' : redactUrl(service.url)}`, { event: 'upstream', service: name });
  }
  for (const [name, service] of servicesOf(gateway.config)) {
    if (!service.tls.rejectUnauthorized)
      logger.warn(`upstream ${name}: TLS certificates are not verified (tls.rejectUnauthorized is false): anyone on the path can read and change its traffic`, {
        event: 'upstream-tls-unverified',
        service: name,
      });
  }
  logger.info(`auth ${gateway.keySource.description}`, { event: 'auth', mode: gateway.keySource.mode });
  for (const note of implicitVaryNotes(gateway.config)) logger.info(note, { event: 'vary' });
  if (gateway.keySource.mode === 'dev') logger.warn('DEV AUTH MODE: not for production', { event: 'dev-auth' });
  if (!worker || cluster.worker?.id === 1) await printDevBanner(gateway, baseUrl);
  send({ type: 'ready', port: address.port });

  if (worker) {
    process.on('message', (message: PrimaryMessage) => {
      switch (message.type) {
        case 'reload':
          gateway.reloadFromSource().then(
            (result) => send({ type: 'reloaded', seq: message.seq, ok: true, changed: result.changed, restartRequired: result.restartRequired, problems: [] }),
            (err: unknown) => send({ type: 'reloaded', seq: message.seq, ok: false, changed: [], restartRequired: [], problems: reloadProblems(err) }),
          );
          return;
        case 'purge':
          gateway.purge(message.path).then(
            (result) => send({ type: 'purged', seq: message.seq, ...result }),
            () => send({ type: 'purged', seq: message.seq, purged: null }),
          );
          return;
        case 'readiness':
          send({ type: 'readiness', seq: message.seq, reason: gateway.readiness(), warnings: gateway.readinessWarnings() });
          return;
      }
    });
  }
}

/** A service of several targets at start: each target, its weight, and that it is in the balance (no request has judged it yet). */
function logTargets(logger: Logger, label: string, name: string, service: UpstreamConfig): void {
  const targets = service.targets.map((t) => `${redactUrl(t.url)} (weight ${t.weight}, in the balance)`);
  logger.info(`${label}: ${targets.length} targets, ${service.balance}: ${targets.join(', ')}`, { event: 'upstream', service: name, targets: targets.length });
}

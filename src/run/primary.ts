import cluster, { type Worker } from 'node:cluster';
import { availableParallelism } from 'node:os';
import { AggregatorRegistry } from 'prom-client';
import { createAdminServer, listenAdmin, type AdminBackend } from '../admin/server.ts';
import { authorize } from '../auth/authenticate.ts';
import { loadOrCreateDevKeys } from '../auth/dev-keys.ts';
import { resolveKeySource } from '../auth/keys.ts';
import { TokenVerifier } from '../auth/verifier.ts';
import { systemClock } from '../clock.ts';
import type { Config } from '../config/types.ts';
import { HgError } from '../errors.ts';
import type { Logger } from '../observability/logger.ts';
import type { PrimaryMessage, WorkerMessage } from './messages.ts';
import { rereadConfig, type ConfigSource } from './reload.ts';

export function workerCount(config: Config): number {
  return config.server.workers === 'auto' ? availableParallelism() : config.server.workers;
}

const MAX_BACKOFF_MS = 10_000;
/** A worker that lived this long counts as healthy: its death restarts the back-off from zero. */
const STABLE_AFTER_MS = 10_000;
const IPC_TIMEOUT_MS = 10_000;

interface Slot {
  worker: Worker | null;
  ready: boolean;
  startedAt: number;
  failures: number;
}

/**
 * The cluster primary (server.workers > 1): forks the workers, restarts one that dies (with
 * exponential back-off), turns SIGHUP into a rolling reload (one worker after the other, each
 * swapping its config in place, so no connection drops), drains all on SIGTERM, and owns the admin
 * listener: readiness over all workers, metrics aggregated by prom-client, purges broadcast.
 */
export async function runPrimary(initial: Config, source: ConfigSource, logger: Logger): Promise<void> {
  let config = initial;
  const count = workerCount(config);
  // Dev mode: make the key pair once, before workers race to create it.
  const anyKeySource = config.auth.jwksUrl ?? config.auth.jwksFile ?? config.auth.publicKeyFile ?? config.auth.secret;
  if (anyKeySource === null) await loadOrCreateDevKeys(config.auth.devKeyDir);

  let verifier = new TokenVerifier(config.auth, await resolveKeySource(config.auth), systemClock);
  const slots: Slot[] = Array.from({ length: count }, () => ({ worker: null, ready: false, startedAt: 0, failures: 0 }));
  let stopping = false;
  let everReady = false;
  let seq = 0;
  const pending = new Map<number, (message: WorkerMessage) => void>();

  const fork = (slot: Slot): void => {
    const worker = cluster.fork();
    slot.worker = worker;
    slot.ready = false;
    slot.startedAt = Date.now();
    worker.on('message', (message: WorkerMessage) => {
      if (message.type === 'ready') {
        slot.ready = true;
        everReady = true;
        return;
      }
      if ('seq' in message) pending.get(message.seq)?.(message);
    });
    worker.on('exit', (code, signal) => {
      slot.worker = null;
      slot.ready = false;
      if (stopping) return;
      if (!everReady && code === 1) {
        logger.error('a worker failed to start; giving up', { event: 'worker-exit', code });
        logger.flush?.();
        process.exit(1);
      }
      slot.failures = Date.now() - slot.startedAt > STABLE_AFTER_MS ? 1 : slot.failures + 1;
      const delay = Math.min(MAX_BACKOFF_MS, 100 * 2 ** (slot.failures - 1));
      logger.error(`worker ${worker.id} died; restarting in ${delay} ms`, { event: 'worker-exit', code, signal, restartInMs: delay });
      setTimeout(() => {
        if (!stopping) fork(slot);
      }, delay).unref();
    });
  };

  /** Sends a message to one worker and waits for its answer (or null after a time-out). */
  const ask = (worker: Worker, message: (seq: number) => PrimaryMessage): Promise<WorkerMessage | null> =>
    new Promise((resolve) => {
      const id = ++seq;
      const timer = setTimeout(() => {
        pending.delete(id);
        resolve(null);
      }, IPC_TIMEOUT_MS);
      pending.set(id, (answer) => {
        clearTimeout(timer);
        pending.delete(id);
        resolve(answer);
      });
      worker.send(message(id));
    });

  const live = (): Worker[] => slots.flatMap((s) => (s.worker !== null && s.ready ? [s.worker] : []));

  const aggregator = new AggregatorRegistry();
  const backend: AdminBackend = {
    readiness: () => {
      if (stopping) return 'shutting down';
      const ready = live().length;
      return ready > 0 ? null : `no worker is ready (0 of ${count})`;
    },
    metrics: async () => ({ contentType: aggregator.contentType, body: await aggregator.clusterMetrics() }),
    authorize: (req) => authorize(req, verifier, config.auth, config.admin.scope),
    purge: async (path) => {
      const answers = await Promise.all(live().map((w) => ask(w, (s) => ({ type: 'purge', seq: s, path }))));
      const done = answers.flatMap((a) => (a?.type === 'purged' && a.purged !== null ? [a] : []));
      if (done.length === 0 && answers.some((a) => a?.type === 'purged')) throw new HgError('HG_ERR_ROUTE_NOT_FOUND', { detail: 'No resource of this gateway has this path.' });
      const purged = done.reduce((n, a) => n + (a.purged ?? 0), 0);
      // With Redis each worker broadcasts, and each count is of every instance: the largest says most.
      const reached = done.flatMap((a) => (a.instances === undefined ? [] : [a.instances]));
      if (reached.length === 0) return { purged };
      const known = reached.filter((n) => n !== null);
      return { purged, instances: known.length === 0 ? null : Math.max(...known) };
    },
  };
  const admin = config.admin.port === null ? null : createAdminServer(backend, logger);
  if (admin !== null && config.admin.port !== null) {
    try {
      const address = await listenAdmin(admin, config.admin.host, config.admin.port);
      logger.info(`admin listener on http://${address.address}:${address.port} (cluster primary)`, { event: 'admin-listening', port: address.port });
    } catch (err) {
      logger.error(`cannot listen on the admin address ${config.admin.host}:${config.admin.port}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`, { event: 'admin-listening' });
      logger.flush?.();
      process.exit(1);
    }
  }
  logger.info(`starting ${count} workers`, { event: 'cluster', workers: count });
  for (const slot of slots) fork(slot);

  let reloading = Promise.resolve();
  process.on('SIGHUP', () => {
    reloading = reloading.then(async () => {
      logger.info('SIGHUP: rolling reload of every worker', { event: 'reload' });
      const next = rereadConfig(source, logger);
      if (next === null) return; // invalid: already logged, nothing changes anywhere
      try {
        verifier = new TokenVerifier(next.auth, await resolveKeySource(next.auth), systemClock);
      } catch (err) {
        logger.error(`config reload rejected: ${(err as Error).message}`, { event: 'reload', ok: false });
        return;
      }
      config = next;
      for (const worker of live()) {
        const answer = await ask(worker, (s) => ({ type: 'reload', seq: s }));
        logger.info(`worker ${worker.id} reload ${answer?.type === 'reloaded' && answer.ok ? 'done' : 'failed'}`, { event: 'reload', worker: worker.id });
      }
    });
  });

  const stop = (signal: string): void => {
    if (stopping) {
      logger.warn('second signal: killing workers', { event: 'shutdown', signal });
      for (const s of slots) s.worker?.process.kill('SIGKILL');
      logger.flush?.();
      process.exit(1);
    }
    stopping = true;
    logger.info('shutting down: draining every worker', { event: 'shutdown', signal });
    // A worker that had to cut requests at its drain time-out exits 1; so does the whole cluster then.
    // One ended by this SIGTERM itself was still starting (no handler yet), so it had nothing to cut.
    const exits = slots.flatMap((s) =>
      s.worker === null ? [] : [new Promise<boolean>((resolve) => s.worker?.once('exit', (code, killedBy) => resolve(code === 0 || killedBy === 'SIGTERM')))],
    );
    for (const s of slots) s.worker?.process.kill('SIGTERM');
    const hardStop = setTimeout(() => {
      for (const s of slots) s.worker?.process.kill('SIGKILL');
    }, config.server.drainTimeoutMs + 5000);
    void Promise.all(exits).then((clean) => {
      clearTimeout(hardStop);
      admin?.close();
      admin?.closeAllConnections();
      logger.info('stopped', { event: 'stopped' });
      logger.flush?.();
      process.exit(clean.every(Boolean) ? 0 : 1);
    });
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
}

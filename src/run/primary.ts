import cluster, { type Worker } from 'node:cluster';
import { randomBytes } from 'node:crypto';
import { availableParallelism } from 'node:os';
import { AggregatorRegistry } from 'prom-client';
import type { AdminBackend, ReadinessAnswer, ReloadResult } from '../admin/backend.ts';
import { createAdminServer, listenAdmin } from '../admin/server.ts';
import { authorize } from '../auth/authenticate.ts';
import { loadOrCreateDevKeys } from '../auth/dev-keys.ts';
import { systemClock } from '../lib/clock.ts';
import type { Config } from '../config/types.ts';
import { isDevAuth, runsEmbeddedSample } from '../config/embedded-sample.ts';
import { HgError } from '../lib/errors.ts';
import { buildAuth, type AuthDeps } from '../gateway/auth.ts';
import { changedKeys, Reloader, restartRequired } from '../gateway/reload.ts';
import { silentLogger, type Logger } from '../observability/logger.ts';
import { emptyJwksTally } from '../observability/metrics.ts';
import { WorkerQuestions } from './ipc.ts';
import { CURSOR_KEY_VARIABLE, type WorkerMessage } from './messages.ts';
import { pidFileProblem, writePidFile } from './pid-file.ts';
import { rereader, type ConfigSource } from './reload.ts';
import { reloadWorkers } from './rolling-reload.ts';
import { die, exitAfterLogs } from './exit.ts';

export function workerCount(config: Config): number {
  return config.server.workers === 'auto' ? availableParallelism() : config.server.workers;
}

const MAX_BACKOFF_MS = 10_000;
/** A worker that lived this long counts as healthy: its death restarts the back-off from zero. */
const STABLE_AFTER_MS = 10_000;
const IPC_TIMEOUT_MS = 10_000;
/** How long workers that are stopped because another failed to start may take before they are killed. */
const GIVE_UP_GRACE_MS = 5000;
/**
 * How long /readyz waits for each worker's own answer. A worker that cannot answer a message in
 * this time cannot serve either (frozen, or its event loop blocked), so it counts as not ready; it
 * is short so the whole probe stays under Kubernetes' default probe time-out of 1 s.
 */
const READINESS_TIMEOUT_MS = 500;

interface Slot {
  worker: Worker | null;
  ready: boolean;
  startedAt: number;
  failures: number;
}

/** Whether the worker in this slot is ready to serve, else which worker and why not; its warnings named by worker. */
async function workerReadiness(slot: Slot, index: number, questions: WorkerQuestions): Promise<ReadinessAnswer> {
  const { worker } = slot;
  const notReady = (reason: string): ReadinessAnswer => ({ reason, warnings: [] });
  if (worker === null) return notReady(`worker slot ${index + 1}: no worker running (it is being restarted)`);
  const name = `worker ${worker.id} (pid ${worker.process.pid})`;
  if (!slot.ready) return notReady(`${name}: starting`);
  const answer = await questions.ask(worker, (seq) => ({ type: 'readiness', seq }), READINESS_TIMEOUT_MS);
  if (answer === null) return notReady(`${name}: no answer within ${READINESS_TIMEOUT_MS} ms`);
  if (answer.type !== 'readiness') return { reason: null, warnings: [] };
  return { reason: answer.reason === null ? null : `${name}: ${answer.reason}`, warnings: answer.warnings.map((w) => `${name}: ${w}`) };
}

/**
 * The cluster primary (server.workers > 1): forks the workers, restarts one that dies (with
 * exponential back-off), turns SIGHUP into a rolling reload (one worker after the other, each
 * swapping its config in place, so no connection drops), drains all on SIGTERM, and owns the admin
 * listener: readiness asked of every worker (ready when all are), metrics aggregated by
 * prom-client, purges broadcast.
 */
export async function runPrimary(initial: Config, source: ConfigSource, logger: Logger): Promise<void> {
  let config = initial;
  const count = workerCount(config);
  // Dev mode: make the key pair once, before workers race to create it.
  if (isDevAuth(config.auth)) await loadOrCreateDevKeys(config.auth.devKeyDir);

  // The admin listener's own verifier (the workers verify the public API's tokens), built like theirs.
  const authDeps: AuthDeps = {
    clock: systemClock,
    logger: silentLogger,
    tokens: { cacheHits: 0, verified: 0, rejected: 0, keysUnavailable: 0 },
    jwks: emptyJwksTally(),
  };
  let auth = await buildAuth(config, null, authDeps);
  const slots: Slot[] = Array.from({ length: count }, () => ({ worker: null, ready: false, startedAt: 0, failures: 0 }));
  let stopping = false;
  let everReady = false;
  const questions = new WorkerQuestions();

  // One key for every worker (and every restarted one), so a cursor made by one opens at another.
  const cursorKey = randomBytes(32).toString('base64url');
  const fork = (slot: Slot): void => {
    const worker = cluster.fork({ [CURSOR_KEY_VARIABLE]: cursorKey });
    slot.worker = worker;
    slot.ready = false;
    slot.startedAt = Date.now();
    worker.on('message', (message: WorkerMessage) => {
      if (message.type === 'ready') {
        slot.ready = true;
        everReady = true;
        return;
      }
      questions.answer(message);
    });
    // A message to a worker that is exiting fails (EPIPE, channel closed). Node's own cluster
    // messages have no callback, so the failure is emitted here; its 'exit' handler deals with it.
    worker.on('error', (err: Error) => logger.debug(`cannot reach worker ${worker.id}`, { event: 'cluster', error: err.message }));
    worker.on('exit', (code, signal) => {
      slot.worker = null;
      slot.ready = false;
      if (stopping) return;
      if (!everReady && code === 1) {
        giveUp();
        return;
      }
      slot.failures = Date.now() - slot.startedAt > STABLE_AFTER_MS ? 1 : slot.failures + 1;
      const delay = Math.min(MAX_BACKOFF_MS, 100 * 2 ** (slot.failures - 1));
      logger.error(`worker ${worker.id} died; restarting in ${delay} ms`, { event: 'worker-exit', code, signal, restartInMs: delay });
      setTimeout(() => {
        if (!stopping) fork(slot);
      }, delay).unref();
    });
  };

  const live = (): Worker[] => slots.flatMap((s) => (s.worker !== null && s.ready ? [s.worker] : []));

  // SIGHUP and POST /reload: the primary checks the config and its keys (it verifies admin tokens
  // too), then each running worker rereads and applies it in turn. A worker started later reads it
  // at its start.
  const applyEverywhere = async (next: Config): Promise<ReloadResult> => {
    const nextAuth = await buildAuth(next, { config, ...auth }, authDeps);
    const changed = changedKeys(config, next);
    const restart = restartRequired(config, next, initial, runsEmbeddedSample(initial));
    auth = nextAuth;
    config = next;
    const workers = await reloadWorkers(live(), questions, IPC_TIMEOUT_MS, logger);
    if (workers.some((w) => !w.ok)) throw new HgError('HG_ERR_RELOAD_INCOMPLETE', { extensions: { changed, restartRequired: restart, workers } });
    return { changed, restartRequired: restart, workers };
  };
  const reloader = new Reloader(rereader(source), applyEverywhere, logger);

  const aggregator = new AggregatorRegistry();
  const backend: AdminBackend = {
    readiness: async () => {
      if (stopping) return { reason: 'shutting down', warnings: [] };
      const answers = await Promise.all(slots.map((slot, index) => workerReadiness(slot, index, questions)));
      const notReady = answers.flatMap((a) => (a.reason === null ? [] : [a.reason]));
      return { reason: notReady.length === 0 ? null : notReady.join('; '), warnings: answers.flatMap((a) => a.warnings) };
    },
    metrics: async () => ({ contentType: aggregator.contentType, body: await aggregator.clusterMetrics() }),
    authorize: (req) => authorize(req, { verifier: auth.verifier, auth: config.auth }, config.admin.scope),
    purge: async (path) => {
      const answers = await Promise.all(live().map((w) => questions.ask(w, (seq) => ({ type: 'purge', seq, path }), IPC_TIMEOUT_MS)));
      const done = answers.flatMap((a) => (a?.type === 'purged' && a.purged !== null ? [a] : []));
      if (done.length === 0 && answers.some((a) => a?.type === 'purged'))
        throw new HgError('HG_ERR_ROUTE_NOT_FOUND', { detail: 'No resource of this gateway has this path.' });
      const purged = done.reduce((n, a) => n + (a.purged ?? 0), 0);
      // With Redis each worker broadcasts, and each count is of every instance: the largest says most.
      const reached = done.flatMap((a) => (a.instances === undefined ? [] : [a.instances]));
      if (reached.length === 0) return { purged };
      const known = reached.filter((n) => n !== null);
      return { purged, instances: known.length === 0 ? null : Math.max(...known) };
    },
    reload: () => reloader.run(),
  };
  const admin = config.admin.port === null ? null : createAdminServer(backend, logger);
  if (admin !== null && config.admin.port !== null) {
    try {
      const address = await listenAdmin(admin, config.admin.host, config.admin.port);
      logger.info(`admin listener on http://${address.address}:${address.port} (cluster primary)`, { event: 'admin-listening', port: address.port });
    } catch (err) {
      logger.error(
        `cannot listen on the admin address ${config.admin.host}:${config.admin.port}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`,
        { event: 'admin-listening' },
      );
      return exitAfterLogs(logger, 1);
    }
  }
  process.on('SIGHUP', () => {
    logger.info('SIGHUP: rolling reload of every worker', { event: 'reload' });
    // The reloader logs every outcome; nobody waits for this one.
    reloader.run().catch(() => {});
  });

  /** Signals every worker and resolves, once all have exited, with whether each exited cleanly. */
  const endWorkers = (signal: NodeJS.Signals, killAfterMs: number): Promise<boolean[]> => {
    // A worker that had to cut requests at its drain time-out exits 1. One ended by this SIGTERM
    // itself was still starting (no handler yet), so it had nothing to cut.
    const exits = slots.flatMap((s) =>
      s.worker === null ? [] : [new Promise<boolean>((resolve) => s.worker?.once('exit', (code, killedBy) => resolve(code === 0 || killedBy === signal)))],
    );
    for (const s of slots) s.worker?.process.kill(signal);
    const hardStop = setTimeout(() => {
      for (const s of slots) s.worker?.process.kill('SIGKILL');
    }, killAfterMs);
    return Promise.all(exits).finally(() => clearTimeout(hardStop));
  };

  const stop = (signal: NodeJS.Signals): void => {
    if (stopping) {
      logger.warn('second signal: killing workers', { event: 'shutdown', signal });
      for (const s of slots) s.worker?.process.kill('SIGKILL');
      void exitAfterLogs(logger, 1);
      return;
    }
    stopping = true;
    logger.info('shutting down: draining every worker', { event: 'shutdown', signal });
    void endWorkers('SIGTERM', config.server.drainTimeoutMs + 5000).then((clean) => {
      admin?.close();
      admin?.closeAllConnections();
      logger.info('stopped', { event: 'stopped' });
      // The cluster exits 1 if any worker had to cut requests.
      void exitAfterLogs(logger, clean.every(Boolean) ? 0 : 1);
    });
  };

  // A worker failed before any was ready (a port in use): the others are still starting. They are
  // stopped, and waited for, before the primary exits, so none is left writing to a primary that
  // is gone (EPIPE) or printing over the one-line error.
  function giveUp(): void {
    stopping = true;
    logger.error('a worker failed to start; giving up', { event: 'worker-exit', code: 1 });
    void endWorkers('SIGTERM', GIVE_UP_GRACE_MS).then(() => exitAfterLogs(logger, 1));
  }

  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
  const { pidFile } = config.server;
  if (pidFile !== null) {
    try {
      writePidFile(pidFile);
    } catch (err) {
      admin?.close();
      die([pidFileProblem(pidFile, err)], logger);
    }
  }
  logger.info(`starting ${count} workers`, { event: 'cluster', workers: count });
  for (const slot of slots) fork(slot);
}

import type { Worker } from 'node:cluster';
import type { WorkerReload } from '../admin/backend.ts';
import type { Logger } from '../observability/logger.ts';
import type { WorkerQuestions } from './ipc.ts';

/**
 * A cluster's reload: each worker rereads the config and swaps it in place, one after the other,
 * so the others keep serving meanwhile. Returns what each did; a worker that does not answer
 * within `timeoutMs` did not reload (as far as anyone can tell).
 */
export async function reloadWorkers(workers: readonly Worker[], questions: WorkerQuestions, timeoutMs: number, logger: Logger): Promise<WorkerReload[]> {
  const done: WorkerReload[] = [];
  for (const worker of workers) {
    const answer = await questions.ask(worker, (seq) => ({ type: 'reload', seq }), timeoutMs);
    const pid = worker.process.pid ?? null;
    const outcome: WorkerReload =
      answer?.type === 'reloaded'
        ? { worker: worker.id, pid, ok: answer.ok, changed: answer.changed, restartRequired: answer.restartRequired, problems: answer.problems }
        : { worker: worker.id, pid, ok: false, changed: [], restartRequired: [], problems: [`no answer within ${timeoutMs} ms`] };
    logger.info(`worker ${worker.id} reload ${outcome.ok ? 'done' : 'failed'}`, { event: 'reload', worker: worker.id, ok: outcome.ok });
    done.push(outcome);
  }
  return done;
}

import type { Worker } from 'node:cluster';
import { Deadline } from '../lib/deadline.ts';
import type { PrimaryMessage, WorkerMessage } from './messages.ts';

/**
 * The primary's questions to its workers over IPC. Each carries a sequence number; the worker's
 * answer with that number settles it, and a deadline gives up on a worker that does not answer
 * (frozen, busy, or gone). A worker can exit at any moment, so a send must never throw or emit an
 * unhandled 'error': a closed channel or a failed write (EPIPE) counts as no answer.
 */
export class WorkerQuestions {
  #seq = 0;
  readonly #pending = new Map<number, (answer: WorkerMessage | null) => void>();

  /** Resolves with the worker's answer, or null when it has none within `timeoutMs`. */
  ask(worker: Worker, question: (seq: number) => PrimaryMessage, timeoutMs: number): Promise<WorkerMessage | null> {
    return new Promise((resolve) => {
      const seq = ++this.#seq;
      const deadline = new Deadline(timeoutMs, 'the worker did not answer in time', { abort: () => settle(null) });
      const settle = (answer: WorkerMessage | null): void => {
        deadline.clear();
        this.#pending.delete(seq);
        resolve(answer);
      };
      this.#pending.set(seq, settle);
      sendTo(worker, question(seq), () => settle(null));
    });
  }

  /** Hands a worker's message to the question it answers, if one is waiting. */
  answer(message: WorkerMessage): void {
    if ('seq' in message) this.#pending.get(message.seq)?.(message);
  }
}

/**
 * Sends one message to a worker. With a callback, node:child_process reports a closed channel or a
 * failed write to it instead of emitting 'error' on the worker, where nobody listens.
 */
export function sendTo(worker: Worker, message: PrimaryMessage, failed: () => void = () => {}): void {
  if (!worker.isConnected()) {
    failed();
    return;
  }
  worker.send(message, (err: Error | null) => {
    if (err !== null) failed();
  });
}

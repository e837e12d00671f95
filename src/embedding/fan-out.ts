/**
 * Runs one answer's part reads with at most `cap` under way at once per upstream service, so one
 * request cannot open a flood of upstream requests to one service however many parts it asks for.
 * Each task's outcome is kept (a failed part is an outcome, not the end of the others).
 */
export async function fanOut<T>(
  tasks: readonly { readonly service: string; readonly run: () => Promise<T> }[],
  cap: number,
): Promise<PromiseSettledResult<T>[]> {
  const results: PromiseSettledResult<T>[] = new Array<PromiseSettledResult<T>>(tasks.length);
  const queues = new Map<string, number[]>();
  tasks.forEach((task, i) => {
    const queue = queues.get(task.service);
    if (queue === undefined) queues.set(task.service, [i]);
    else queue.push(i);
  });
  const worker = async (queue: number[]): Promise<void> => {
    for (let i = queue.shift(); i !== undefined; i = queue.shift()) {
      const task = tasks[i] as (typeof tasks)[number];
      try {
        results[i] = { status: 'fulfilled', value: await task.run() };
      } catch (reason) {
        results[i] = { status: 'rejected', reason };
      }
    }
  };
  const workers: Promise<void>[] = [];
  for (const queue of queues.values()) for (let n = Math.min(cap, queue.length); n > 0; n--) workers.push(worker(queue));
  await Promise.all(workers);
  return results;
}

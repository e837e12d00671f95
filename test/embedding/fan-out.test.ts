import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { fanOut } from '../../src/embedding/fan-out.ts';

describe('fanOut', () => {
  test('runs at most `cap` tasks of one service at once, each service apart, and keeps every outcome', async () => {
    const running = new Map<string, number>();
    const most = new Map<string, number>();
    const task = (service: string, fail: boolean) => ({
      service,
      run: async (): Promise<string> => {
        running.set(service, (running.get(service) ?? 0) + 1);
        most.set(service, Math.max(most.get(service) ?? 0, running.get(service) ?? 0));
        await Promise.resolve();
        running.set(service, (running.get(service) ?? 0) - 1);
        if (fail) throw new Error(`${service} failed`);
        return service;
      },
    });
    const tasks = [task('a', false), task('a', true), task('a', false), task('b', false), task('b', false), task('a', false)];
    const results = await fanOut(tasks, 2);
    assert.deepEqual(
      results.map((r) => r.status),
      ['fulfilled', 'rejected', 'fulfilled', 'fulfilled', 'fulfilled', 'fulfilled'],
    );
    assert.equal(most.get('a'), 2);
    assert.equal(most.get('b'), 2);
    assert.equal((await fanOut([task('c', false), task('c', false)], 1)).length, 2);
  });
});

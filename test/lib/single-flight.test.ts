import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { SingleFlight } from '../../src/lib/single-flight.ts';

/** A promise and the functions that settle it. */
function deferred<T>(): { promise: Promise<T>; resolve: (value: T) => void; reject: (err: Error) => void } {
  let resolve!: (value: T) => void;
  let reject!: (err: Error) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

describe('SingleFlight', () => {
  test('callers of run for one key while its work is under way share that work', async () => {
    const flights = new SingleFlight<number>();
    const gate = deferred<number>();
    let started = 0;
    const work = (): Promise<number> => {
      started++;
      return gate.promise;
    };
    const first = flights.run('k', work);
    const second = flights.run('k', work);
    assert.equal(started, 1);
    assert.equal(flights.has('k'), true);
    gate.resolve(7);
    assert.deepEqual(await Promise.all([first, second]), [7, 7]);
  });

  test('settled work is forgotten, so a failure is not served to later callers', async () => {
    const flights = new SingleFlight<number>();
    await assert.rejects(
      flights.run('k', () => Promise.reject(new Error('down'))),
      /down/,
    );
    assert.equal(flights.size, 0);
    assert.equal(await flights.run('k', () => Promise.resolve(1)), 1);
  });

  test('other keys run apart', async () => {
    const flights = new SingleFlight<string>();
    const a = flights.run('a', () => Promise.resolve('a'));
    const b = flights.run('b', () => Promise.resolve('b'));
    assert.equal(flights.size, 2);
    assert.deepEqual(await Promise.all([a, b]), ['a', 'b']);
  });

  test('start replaces the flight under way, which goes on for those that joined it, and runs settled after the key is forgotten', async () => {
    const flights = new SingleFlight<number>();
    const old = deferred<number>();
    const joined = flights.start(
      'k',
      1,
      () => old.promise,
      () => {},
    );
    let sizeWhenSettled = -1;
    const fresh = flights.start(
      'k',
      2,
      () => Promise.resolve(2),
      () => {
        sizeWhenSettled = flights.size;
      },
    );
    assert.equal(flights.get('k')?.stamp, 2);
    assert.equal(await fresh, 2);
    assert.equal(sizeWhenSettled, 0);
    old.resolve(1);
    assert.equal(await joined, 1);
  });
});

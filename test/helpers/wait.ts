import assert from 'node:assert/strict';

/**
 * Waits for something the gateway does in the background (a refresh stored, requests queued),
 * polling every few ms, and fails after `timeoutMs`. No test asserts on how long it took.
 */
export async function until(what: string, done: () => boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!done()) {
    if (Date.now() > deadline) assert.fail(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
}

/** A promise the test resolves by hand: hold a test upstream's answer until `open()`. */
export function gate(): { readonly promise: Promise<void>; open(): void } {
  let open = (): void => {};
  const promise = new Promise<void>((resolve) => (open = resolve));
  return { promise, open };
}

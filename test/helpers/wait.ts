/**
 * How long a test waits for something done in the background (a log line, a process, a store in
 * Redis) before it fails. It bounds a wait that ends as soon as the thing is done, so it costs a
 * passing test nothing; it is long enough for a 2-core machine whose cores other work keeps busy.
 */
export const PATIENCE_MS = 60_000;

/**
 * Polls until `ready()` is true, and fails after `timeoutMs`: for something done in the
 * background (a refresh stored, requests queued, a line a child prints). No test asserts on how
 * long it took.
 */
export async function waitFor(ready: () => boolean, what: string, timeoutMs = PATIENCE_MS): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!ready()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** A promise the test resolves by hand: hold a test upstream's answer until `open()`. */
export function gate(): { readonly promise: Promise<void>; open(): void } {
  let open = (): void => {};
  const promise = new Promise<void>((resolve) => (open = resolve));
  return { promise, open };
}

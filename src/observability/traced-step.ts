import { HgError } from '../lib/errors.ts';
import type { RequestTrace, StepSpan } from './tracing.ts';

/** The conventions' `error.type` of what a step threw: our error code, else the exception's name. */
export function errorTypeOf(err: unknown): string {
  if (err instanceof HgError) return err.code;
  return err instanceof Error ? err.name : 'error';
}

/**
 * `work` timed as a step of `trace`: a span named `name` that ends when the value is there, at
 * once or when its promise settles, with what `describe` says of it, or with `error.type` when it
 * throws or rejects; `link` names another request's span it waited on. Without a trace (the request is not traced) it is `work()` and nothing more.
 */
export function tracedStep<T>(
  trace: RequestTrace | undefined,
  name: string,
  work: () => T | Promise<T>,
  describe: (span: StepSpan) => void,
  link?: RequestTrace,
): T | Promise<T> {
  if (trace === undefined) return work();
  const span = trace.step(name, link);
  let result: T | Promise<T>;
  try {
    result = work();
  } catch (err) {
    span.end(errorTypeOf(err));
    throw err;
  }
  if (!(result instanceof Promise)) {
    describe(span);
    span.end();
    return result;
  }
  return result.then(
    (value) => {
      describe(span);
      span.end();
      return value;
    },
    (err: unknown) => {
      span.end(errorTypeOf(err));
      throw err;
    },
  );
}

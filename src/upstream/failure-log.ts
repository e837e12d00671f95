import type { HgError } from '../lib/errors.ts';
import { SAMPLE_BYTES, type Answer } from '../lib/exchange.ts';
import { logSnippet } from '../observability/log-snippet.ts';

/** Fields of a log line: what only the operator may see (HgError.log). */
export type LogFields = Record<string, string | number>;

/**
 * What the log line of a failed request says about the service's part: its name (`service`), and
 * for an answer that is not a success, its status and a snippet of its own body, with the
 * service's configured header values (`secrets`) and anything credential-shaped redacted
 * (logSnippet). Never part of a client's problem: the service's name is internal.
 */
export function failureLog(service: string, status: number, answer: Answer | null, secrets: readonly string[]): LogFields {
  const fields: LogFields = { service };
  if (status < 300 || answer === null) return fields;
  fields['upstreamStatus'] = status;
  const bytes = answer.body ?? answer.sample ?? null;
  if (bytes !== null && bytes.length > 0) fields['upstreamBody'] = logSnippet(bytes.subarray(0, SAMPLE_BYTES), answer.bodyBytes ?? bytes.length, secrets);
  return fields;
}

/** `err` with `fields` added to its log line, where it has none of those names yet. */
export function withLog(err: HgError, fields: Readonly<LogFields>): HgError {
  for (const [name, value] of Object.entries(fields)) err.log[name] ??= value;
  return err;
}

import { KeySourceError } from '../auth/keys.ts';
import type { Config } from '../config/types.ts';
import { hasAddress } from '../config/service-checks.ts';
import { ConfigError } from '../config/validate.ts';
import { HgError } from '../lib/errors.ts';
import type { Logger } from '../observability/logger.ts';
import type { ReloadResult } from '../admin/backend.ts';
import { sameValue } from '../lib/same-value.ts';

/**
 * The keys a running gateway cannot apply in place: what changed among them takes effect only
 * after a restart (listening addresses and workers; the logger's buffer; maxHeaderBytes is handed to each connection's
 * parser when it is created; the pid file is written once; the embedded sample service is started once).
 */
export function restartRequired(previous: Config, next: Config, initial: Config, embedded: boolean): string[] {
  const keys: string[] = [];
  for (const key of ['host', 'port', 'workers', 'maxHeaderBytes', 'pidFile'] as const) {
    if (!sameValue(previous.server[key], next.server[key])) keys.push(`server.${key}`);
  }
  for (const key of ['host', 'port'] as const) {
    if (!sameValue(previous.admin[key], next.admin[key])) keys.push(`admin.${key}`);
  }
  if (previous.log.maxBufferBytes !== next.log.maxBufferBytes) keys.push('log.maxBufferBytes');
  // The Redis connection and what hangs on it (shared state, idempotency records) are made once, at
  // start, and so is the tracer (its exporter, queue and sampler).
  for (const section of ['redis', 'idempotency', 'tracing'] as const) {
    for (const key of Object.keys(next[section]) as (keyof Config[typeof section])[]) {
      if (!sameValue(initial[section][key], next[section][key])) keys.push(`${section}.${String(key)}`);
    }
  }
  if (embedded && !hasAddress(next.upstream) && next.sampleUpstream.customers !== initial.sampleUpstream.customers) keys.push('sampleUpstream.customers');
  return keys;
}

function isSection(value: unknown): value is Readonly<Record<string, unknown>> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The paths of the keys whose values differ (a list counts as one value), in schema order. */
export function changedKeys(previous: Config, next: Config): string[] {
  const out: string[] = [];
  const walk = (a: unknown, b: unknown, path: string): void => {
    if (isSection(a) && isSection(b)) {
      for (const key of new Set([...Object.keys(a), ...Object.keys(b)])) walk(a[key], b[key], path === '' ? key : `${path}.${key}`);
      return;
    }
    if (!sameValue(a, b)) out.push(path);
  };
  walk(previous, next, '');
  return out;
}

/** A reload that changed nothing: the problems why, logged once and answered by POST /reload (422). */
class ReloadRejected extends HgError {
  readonly problems: readonly string[];
  constructor(problems: readonly string[]) {
    super('HG_ERR_RELOAD_INVALID_CONFIG', { extensions: { problems: [...problems] } });
    this.problems = problems;
  }
}

function rejected(problems: readonly string[], logger: Logger): ReloadRejected {
  logger.error(`config reload rejected: ${problems.length} problem(s); the running config is kept`, { event: 'reload', ok: false });
  for (const problem of problems) logger.error(problem, { event: 'reload', ok: false });
  return new ReloadRejected(problems);
}

/** Why a reload failed, one line per problem (a cluster worker reports them to the primary). */
export function reloadProblems(err: unknown): readonly string[] {
  return err instanceof ReloadRejected ? err.problems : [(err as Error).message];
}

/**
 * SIGHUP and POST /reload: reread the config (file and environment) and apply it, one reload at a
 * time. A config with problems, keys that cannot be used (KeySourceError: an unreadable key file,
 * a key no allowed algorithm fits) or a change that needs a restart to apply (ConfigError from
 * `apply`) change nothing and throw HG_ERR_RELOAD_INVALID_CONFIG (422) listing each problem. Every
 * outcome is logged here, so a SIGHUP, which has nobody to answer, needs only to start it.
 */
export class Reloader {
  readonly #reread: () => Config;
  readonly #apply: (next: Config) => Promise<ReloadResult>;
  readonly #logger: Logger;
  #last: Promise<unknown> = Promise.resolve();

  constructor(reread: () => Config, apply: (next: Config) => Promise<ReloadResult>, logger: Logger) {
    this.#reread = reread;
    this.#apply = apply;
    this.#logger = logger;
  }

  /** Starts a reload after any under way (a SIGHUP and a POST /reload that overlap run in turn). */
  run(): Promise<ReloadResult> {
    const result = this.#last.then(() => this.#once());
    this.#last = result.catch(() => {});
    return result;
  }

  async #once(): Promise<ReloadResult> {
    const logger = this.#logger;
    let result: ReloadResult;
    try {
      result = await this.#apply(this.#reread());
    } catch (err) {
      if (err instanceof ConfigError) throw rejected(err.problems, logger);
      if (err instanceof KeySourceError) throw rejected([err.message], logger);
      logger.error(`config reload failed: ${(err as Error).message}`, { event: 'reload', ok: false });
      throw err;
    }
    if (result.keysKeptReason !== undefined && result.keysKeptReason !== null) {
      logger.warn(`config reloaded, but ${result.keysKeptReason}`, { event: 'reload', keysKept: true, reason: result.keysKeptReason });
    }
    if (result.restartRequired.length > 0) {
      logger.warn(`config reloaded, but ${result.restartRequired.join(', ')} take effect only after a restart`, {
        event: 'reload',
        restartRequired: result.restartRequired.join(','),
      });
    }
    logger.info('config reloaded', { event: 'reload', ok: true, changed: result.changed.join(',') });
    return result;
  }
}

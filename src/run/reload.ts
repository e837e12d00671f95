import { loadConfig } from '../config/load.ts';
import type { Config } from '../config/types.ts';
import { ConfigError } from '../config/validate.ts';
import type { Gateway } from '../gateway.ts';
import type { Logger } from '../observability/logger.ts';

export interface ConfigSource {
  readonly file: string | undefined;
  readonly env: NodeJS.ProcessEnv;
}

/** Reads and validates the config again; logs every problem and returns null when it is invalid. */
export function rereadConfig(source: ConfigSource, logger: Logger, overrides: (c: Config) => Config = (c) => c): Config | null {
  try {
    return overrides(loadConfig({ file: source.file, env: source.env }));
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    logger.error(`config reload rejected: ${err.problems.length} problem(s); the running config is kept`, { event: 'reload', ok: false, file: source.file });
    for (const problem of err.problems) logger.error(problem, { event: 'reload', ok: false });
    return null;
  }
}

/**
 * SIGHUP: reread the file and the environment and apply them to the running gateway without
 * closing a listener or a connection. An invalid file, or keys that cannot be loaded, change nothing;
 * a JWKS that cannot be fetched keeps the keys in use (and says so).
 */
export async function reloadGateway(gateway: Gateway, source: ConfigSource, logger: Logger, overrides?: (c: Config) => Config): Promise<boolean> {
  const next = rereadConfig(source, logger, overrides);
  if (next === null) return false;
  try {
    const { restartRequired, keysKeptReason } = await gateway.reload(next);
    if (keysKeptReason !== null) logger.warn(`config reloaded, but ${keysKeptReason}`, { event: 'reload', keysKept: true, reason: keysKeptReason });
    if (restartRequired.length > 0) logger.warn(`config reloaded, but ${restartRequired.join(', ')} take effect only after a restart`, { event: 'reload', restartRequired: restartRequired.join(',') });
    logger.info('config reloaded', { event: 'reload', ok: true, file: source.file });
    return true;
  } catch (err) {
    logger.error(`config reload rejected: ${(err as Error).message}; the running config is kept`, { event: 'reload', ok: false });
    return false;
  }
}

import type { Config } from '../config/types.ts';
import { loadConfig } from '../gateway/load-config.ts';

export interface ConfigSource {
  readonly file: string | undefined;
  readonly env: NodeJS.ProcessEnv;
}

/**
 * How a running process reads its config again for a reload (SIGHUP, POST /reload): the same file
 * and environment as at start, validated anew (ConfigError when invalid), with the process's own
 * overrides (a cluster worker leaves the admin listener to the primary).
 */
export function rereader(source: ConfigSource, overrides: (c: Config) => Config = (c) => c): () => Config {
  return () => overrides(loadConfig({ file: source.file, env: source.env }));
}

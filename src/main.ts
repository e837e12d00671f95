import cluster from 'node:cluster';
import { implicitVaryNotes } from './config/vary.ts';
import { resolveKeySource, KeySourceError } from './auth/keys.ts';
import { isDevAuth } from './config/embedded-sample.ts';
import { parseArgs } from './lib/cli-args.ts';
import { mergeConfig } from './config/load.ts';
import type { Config } from './config/types.ts';
import { ConfigError } from './config/validate.ts';
import { createLogger } from './observability/logger.ts';
import { runPrimary, workerCount } from './run/primary.ts';
import type { ConfigSource } from './run/reload.ts';
import { die } from './run/exit.ts';
import { loadConfig, validateConfig } from './gateway/load-config.ts';

const USAGE = `usage: hypergate [--config FILE] [--check-config]

  --config FILE    JSON file loaded over config/default.json (see docs/configuration.md)
  --check-config   validate the config (file + environment) and exit: 0 when valid, 1 listing every problem;
                   a JWKS that cannot be fetched is a warning (exit 0: the key server may come up later)
  --help           this text

Environment: HYPERGATE_<SECTION>_<KEY> overrides any scalar key (HYPERGATE_SERVER_PORT,
HYPERGATE_UPSTREAM_URL, HYPERGATE_LOG_LEVEL, ...); HYPERGATE_PORT and HYPERGATE_HOST still work.
Signals: SIGHUP reloads config and keys (send it to this process, not to npm: see server.pidFile;
POST /reload on the admin listener does the same), SIGTERM/SIGINT drain and stop.`;

/** What a config was read from, for --check-config's header: the file (or the defaults) and the environment. */
function sourcesOf(source: ConfigSource): string {
  const file = source.file ?? 'config/default.json';
  const fromEnv = Object.entries(source.env).some(([name, value]) => name.startsWith('HYPERGATE_') && value !== undefined && value !== '');
  return fromEnv ? `${file} and the environment` : file;
}

/**
 * --check-config: every problem of the file, the environment and the key source, one per line.
 * A problem with a value from the environment names its variable (config/problems.ts).
 * A JWKS is fetched too, but one that cannot be is a warning, not a problem: the gateway starts
 * without it (tokens get 503, /readyz says why) and takes its keys once the key server answers.
 */
async function checkConfig(source: ConfigSource): Promise<never> {
  const where = sourcesOf(source);
  let config: Config;
  try {
    config = loadConfig(source);
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    process.stderr.write(`hypergate: ${where}: ${err.problems.length} problem(s)\n${err.problems.map((p) => `  ${p}\n`).join('')}`);
    process.exit(1);
  }
  const { auth } = config;
  let warning: string | null = null;
  if (!isDevAuth(auth)) {
    try {
      const keys = (await resolveKeySource(auth)).remote;
      await keys?.refresh();
      if (keys?.failure)
        warning = `auth.jwksUrl: could not fetch ${keys.url}: ${keys.failure.message} (the gateway would start without keys and answer 503 until it can)`;
    } catch (err) {
      if (!(err instanceof KeySourceError)) throw err;
      process.stderr.write(`hypergate: ${where}: 1 problem(s)\n  ${err.message}\n`);
      process.exit(1);
    }
  }
  process.stdout.write(`hypergate: ${where}: configuration is valid\n`);
  for (const note of implicitVaryNotes(config)) process.stdout.write(`hypergate: note: ${note}\n`);
  if (warning !== null) process.stderr.write(`hypergate: warning: ${warning}\n`);
  process.exit(0);
}

async function main(): Promise<void> {
  let args: Map<string, string | true>;
  try {
    args = parseArgs(process.argv.slice(2), ['--config'], ['--help', '--check-config']);
  } catch (err) {
    die([(err as Error).message, USAGE]);
  }
  if (args.has('--help')) {
    process.stdout.write(`${USAGE}\n`);
    return;
  }
  const file = args.get('--config');
  const source: ConfigSource = { file: typeof file === 'string' ? file : undefined, env: process.env };
  if (args.has('--check-config')) await checkConfig(source);
  let config: Config;
  try {
    config = loadConfig(source);
  } catch (err) {
    if (err instanceof ConfigError) die(['invalid configuration, not starting:', ...err.problems.map((p) => `  ${p}`)]);
    throw err;
  }
  // A cluster's processes share stdout: each writes its lines so they never interleave.
  const logger = createLogger(config.log.level, undefined, {
    maxBufferBytes: config.log.maxBufferBytes,
    sharedStdout: cluster.isWorker || workerCount(config) > 1,
    workerId: cluster.worker?.id,
  });
  if (cluster.isPrimary && workerCount(config) > 1) {
    await runPrimary(config, source, logger);
    return;
  }
  // The request engine loads only in a process that serves requests, never in a cluster's primary.
  const { serve } = await import('./run/serve.ts');
  // A worker leaves the admin listener to the primary.
  const overrides = cluster.isWorker ? (c: Config): Config => validateConfig(mergeConfig(c, { admin: { port: null } })) : undefined;
  await serve(overrides ? overrides(config) : config, source, logger, overrides);
}

main().catch((err: unknown) => {
  process.stderr.write(`hypergate: failed to start: ${(err as Error).message}\n`);
  process.exit(1);
});

import { createConfigLoader } from '../config/load.ts';
import { checkRoutes } from '../passthrough/config-checks.ts';
import { checkResources } from '../resources/config-checks.ts';

/**
 * The config as the gateway loads it: the schema's checks, the cross-key rules, and the checks
 * that need the engines above config (the resource declarations: templates, pointers, colliding
 * paths, link targets; the pass-through routes: templates, services, paths that overlap). main.ts,
 * reloads, the token tool and the tests all load through these, so what is checked is the same
 * everywhere.
 */
export const { loadConfig, configWith, validateConfig } = createConfigLoader([checkResources, checkRoutes]);

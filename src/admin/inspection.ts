import type { Config } from '../config/types.ts';
import type { RouteDef } from '../protocol/route.ts';
import type { CompiledRoute } from '../passthrough/compile.ts';
import type { ResourceTable } from '../resources/compile.ts';
import { redactedConfig } from './redacted-config.ts';
import { resourceView } from './resource-view.ts';
import { routeRows } from './route-table.ts';

/** What the gateway serves right now: the config in force and the tables built from it. */
export interface ServingState {
  readonly config: Config;
  readonly table: ResourceTable;
  readonly routes: readonly RouteDef[];
  readonly passthrough: readonly CompiledRoute[];
  /** 1 for the config the gateway started with, one more for each reload applied. */
  readonly generation: number;
  /** When this generation was applied (start or reload), in milliseconds since the epoch. */
  readonly appliedAt: number;
}

/** The admin API's read-only answers (GET /config, /routes, /resources/<name>): JSON values, never a secret. */
export interface AdminInspection {
  config(): unknown;
  routes(): unknown;
  /** Throws a 404 HgError for a name no resource has. */
  resource(name: string): unknown;
}

/** Answers built each time from the state in force, so a reload shows at once. */
export function inspectionOf(state: () => ServingState): AdminInspection {
  const generationOf = (s: ServingState) => ({ generation: s.generation, appliedAt: new Date(s.appliedAt).toISOString() });
  return {
    config: () => {
      const s = state();
      return { ...generationOf(s), config: redactedConfig(s.config) };
    },
    routes: () => {
      const s = state();
      return { ...generationOf(s), routes: routeRows(s.routes, s.table, s.passthrough) };
    },
    resource: (name) => {
      const s = state();
      return { ...generationOf(s), ...resourceView(name, s.config, s.table) };
    },
  };
}

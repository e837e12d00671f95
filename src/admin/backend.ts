import type { IncomingMessage } from 'node:http';
import type { Principal } from '../auth/principal.ts';
import type { AdminInspection } from './inspection.ts';
import type { ApiKeysAdminParts } from './api-keys.ts';

/** What /readyz answers: `reason` null when ready to take traffic (then `warnings` say what is degraded, if anything). */
export interface ReadinessAnswer {
  readonly reason: string | null;
  readonly warnings: readonly string[];
}

/** What the admin listener needs from whoever runs it: one gateway, or a cluster's primary. */
export interface AdminBackend {
  /** Whether this instance should take traffic, and if not why (a cluster's primary asks its workers). */
  readiness(): ReadinessAnswer | Promise<ReadinessAnswer>;
  metrics(): Promise<{ readonly contentType: string; readonly body: string }>;
  /** Verifies the request's bearer token (same verifier as the public API) and requires the admin scope. */
  authorize(req: IncomingMessage): Principal | Promise<Principal>;
  /**
   * Drops what is cached for one public path (docs/operations.md "Admin listener"), or everything when null;
   * rejects with a 404 HgError for a path no route answers.
   */
  purge(path: string | null): Promise<PurgeResult>;
  /**
   * POST /reload: rereads the config and applies it (with workers, in each of them in turn). Throws
   * an HgError problem when it changed nothing (422) or not everywhere (503). Absent: no such route.
   */
  readonly reload?: (() => Promise<ReloadResult>) | undefined;
  /** GET /config, /routes and /resources/<name> (docs/operations.md). Absent: no such routes. */
  readonly inspection?: AdminInspection | undefined;
  /** The key store of `/api-keys` under the config in force; null (or absent): no such routes (no Redis, or auth.apiKeys.redis off). */
  readonly apiKeys?: (() => ApiKeysAdminParts | null) | undefined;
}

/** What a purge answers: entries dropped here, and (with Redis) how many instances the broadcast reached. */
export interface PurgeResult {
  readonly purged: number;
  /** Instances reached (this one included); null when Redis did not confirm in time (it is sent again); absent without Redis. */
  readonly instances?: number | null;
}

/** What one worker of a cluster did with a reload (POST /reload's answer lists them). */
export type WorkerReload = {
  readonly worker: number;
  readonly pid: number | null;
  readonly ok: boolean;
  readonly changed: readonly string[];
  readonly restartRequired: readonly string[];
  /** Why it did not apply the new config, when ok is false. */
  readonly problems: readonly string[];
};

/** What a reload changed: POST /reload's answer and the reload log line. */
export interface ReloadResult {
  /** Key paths whose value changed (`log.level`, `upstream.timeoutMs`), values never shown. */
  readonly changed: readonly string[];
  /** Changed keys that take effect only after a restart (listening addresses, workers, ...). */
  readonly restartRequired: readonly string[];
  /** With server.workers > 1: what each running worker did. */
  readonly workers?: readonly WorkerReload[];
  /** True when the JWKS could not be fetched and the keys in use (and, with auth.* unchanged, the verified tokens) were kept. */
  readonly keysKept?: boolean;
  /** Why the keys were kept (the URL and the cause); null or absent when they were not. */
  readonly keysKeptReason?: string | null;
}

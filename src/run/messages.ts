/** IPC between the cluster primary and its workers. */
export type PrimaryMessage =
  | { readonly type: 'reload'; readonly seq: number }
  | { readonly type: 'purge'; readonly seq: number; readonly path: string | null }
  | { readonly type: 'readiness'; readonly seq: number };

export type WorkerMessage =
  | { readonly type: 'ready'; readonly port: number }
  /** A reload's outcome: what changed, or the problems that kept it from applying (ok false). */
  | {
      readonly type: 'reloaded';
      readonly seq: number;
      readonly ok: boolean;
      readonly changed: readonly string[];
      readonly restartRequired: readonly string[];
      readonly problems: readonly string[];
    }
  /** purged null: no route has this path (the primary answers 404); instances as in PurgeResult. */
  | { readonly type: 'purged'; readonly seq: number; readonly purged: number | null; readonly instances?: number | null }
  | { readonly type: 'readiness'; readonly seq: number; readonly reason: string | null; readonly warnings: readonly string[] };

/**
 * The environment variable a cluster primary gives each worker the key that seals paging cursors
 * in (base64url), while paging.cursorSecret is null: every worker then opens the cursors any of
 * them made. Not a HYPERGATE_ variable: it is no config key and no operator sets it.
 */
export const CURSOR_KEY_VARIABLE = 'HG_WORKER_CURSOR_KEY';

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
  | { readonly type: 'readiness'; readonly seq: number; readonly reason: string | null };

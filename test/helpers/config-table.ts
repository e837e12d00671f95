import { tableRegion } from '../../scripts/config-reference.ts';

/** A row's Default cell: parsed JSON when it is one backticked value, else its text (e.g. "required", "—"). */
export type DefaultCell = { readonly json: unknown } | { readonly text: string };

/** One row of the configuration table in docs/configuration.md. */
export interface ConfigRow {
  /** The key as written: `server.port`, or `resources.<name>.path` for keys of named entries. */
  readonly key: string;
  /** The Type cell as written: `integer (ms)`, `path or null`, ... */
  readonly type: string;
  readonly default: DefaultCell;
}

/** The configuration table of docs/configuration.md by key; throws when its marked region is missing. */
export function documentedConfigRows(): Map<string, ConfigRow> {
  const { text, start, end } = tableRegion();
  const rows = new Map<string, ConfigRow>();
  for (const line of text.slice(start, end).split('\n')) {
    const cells = line.split('|').map((c) => c.trim());
    const key = /^`([A-Za-z0-9.<>[\]]+)`$/.exec(cells[1] ?? '')?.[1];
    if (key === undefined) continue;
    const value = /^`(.*)`$/.exec(cells[3] ?? '')?.[1];
    // Two rows for one key say two things of it, one of them stale.
    if (rows.has(key)) throw new Error(`docs/configuration.md has two rows for ${key}`);
    rows.set(key, { key, type: cells[2] ?? '', default: value === undefined ? { text: cells[3] ?? '' } : { json: JSON.parse(value) } });
  }
  return rows;
}

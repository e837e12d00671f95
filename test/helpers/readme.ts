import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { PROJECT_ROOT } from '../../src/config/load.ts';

/** One row of the README "Configuration" table. */
export interface ConfigRow {
  readonly key: string;
  /** The Type cell as written: `integer (ms)`, `path or null`, ... */
  readonly type: string;
  /** The Default cell, parsed as JSON. */
  readonly defaultValue: unknown;
}

/** The README "Configuration" table by key; throws when the section is missing. */
export function readmeConfigRows(): Map<string, ConfigRow> {
  const text = readFileSync(resolve(PROJECT_ROOT, 'README.md'), 'utf8');
  const start = text.indexOf('\n## Configuration');
  if (start === -1) throw new Error('README has no "## Configuration" section');
  const end = text.indexOf('\n## ', start + 1);
  const rows = new Map<string, ConfigRow>();
  for (const line of text.slice(start, end === -1 ? undefined : end).split('\n')) {
    const cells = line.split('|').map((c) => c.trim());
    const key = /^`([A-Za-z0-9.]+)`$/.exec(cells[1] ?? '')?.[1];
    const value = /^`(.*)`$/.exec(cells[3] ?? '')?.[1];
    if (key === undefined || value === undefined) continue;
    rows.set(key, { key, type: cells[2] ?? '', defaultValue: JSON.parse(value) });
  }
  return rows;
}

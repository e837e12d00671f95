import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { PROJECT_ROOT } from '../src/config/load.ts';
import type { Rule } from '../src/config/rule.ts';
import { CONFIG_SCHEMA } from '../src/config/schema.ts';

/**
 * What the schema (src/config/schema.ts) writes for people: config/default.json and the
 * configuration table. `npm run config:docs` writes both; test/config/readme-table.test.ts fails
 * when either differs from what the schema says.
 */

export const TABLE_START = '<!-- config-table:start -->';
export const TABLE_END = '<!-- config-table:end -->';
/** The configuration reference: the table is between the two markers. */
export const TABLE_FILE = resolve(PROJECT_ROOT, 'docs/configuration.md');

/** The defaults tree: every key's default, a section by its keys. */
function defaultsOf(rule: Rule, key: string): unknown {
  if (rule.default !== undefined) return rule.default;
  if (rule.kind !== 'section') throw new Error(`${key}: a key of config/default.json needs a default in the schema`);
  return Object.fromEntries(Object.entries(rule.keys).map(([name, child]) => [name, defaultsOf(child, key === '' ? name : `${key}.${name}`)]));
}

/** config/default.json as the schema writes it. */
export function defaultsText(): string {
  return `${JSON.stringify(defaultsOf(CONFIG_SCHEMA, ''), null, 2)}\n`;
}

const KiB = 1024;
const SIZES: readonly [number, string][] = [
  [KiB * KiB * KiB, 'GiB'],
  [KiB * KiB, 'MiB'],
  [KiB, 'KiB'],
];

/**
 * A bound as the table shows it: byte counts in the largest binary unit they are a whole number
 * of, other large numbers with thousands separators (ports and the like stay as they are).
 */
function bound(value: number, rule: Rule): string {
  if (rule.kind === 'integer' && rule.unit === 'bytes') {
    for (const [size, name] of SIZES) if (value >= size && value % size === 0) return `${value / size} ${name}`;
  }
  return value < 100_000 ? String(value) : String(value).replace(/\B(?=(\d{3})+$)/g, ',');
}

/** The Type cell: the kind, its unit, what else it takes, and an integer's bounds. */
function typeOf(rule: Rule): string {
  const orNull = 'nullable' in rule && rule.nullable === true ? ' or null' : '';
  switch (rule.kind) {
    case 'string':
      return `${rule.label ?? (rule.path === true ? 'path' : 'string')}${orNull}`;
    case 'integer': {
      const unit = rule.unit === undefined ? '' : ` (${rule.unit})`;
      const word = rule.orWord === undefined ? '' : ` or \`"${rule.orWord}"\``;
      const range = rule.max === Number.MAX_SAFE_INTEGER ? `at least ${bound(rule.min, rule)}` : `${bound(rule.min, rule)} to ${bound(rule.max, rule)}`;
      return `integer${unit}${orNull}${word}, ${range}`;
    }
    case 'url':
    case 'redisUrl':
      return `URL${orNull}`;
    case 'strings':
      return `array${rule.entries === undefined ? '' : ' of strings or objects'}${orNull}`;
    case 'list':
      return `array${orNull}`;
    case 'boolean':
      return `boolean${orNull}`;
    case 'section':
    case 'map':
      return `object${orNull}`;
    case 'headerValue':
      return `string or \`{"env": "NAME"}\`${orNull}`;
    case 'scalar':
      return `string, number, boolean or array${orNull}`;
    case 'stringOr':
      return `${rule.string.label ?? 'string'} or object${orNull}`;
  }
}

function row(key: string, type: string, value: string, doc: string): string {
  return `| \`${key}\` | ${type} | ${value} | ${doc.replaceAll('|', '\\|')} |`;
}

/**
 * The rows for `rule` at `key`: one per key that has a line of its own (every leaf; a section or
 * map that says something of itself), in schema order. Keys of named entries are written
 * `resources.<name>.path`; inside them a key without a default is "required".
 */
function rows(rule: Rule, key: string, out: string[]): string[] {
  const leaf = rule.kind !== 'section' && !(rule.kind === 'map' && rule.values.kind === 'section');
  if (rule.doc !== undefined) out.push(row(key, typeOf(rule), rule.default === undefined ? 'required' : `\`${JSON.stringify(rule.default)}\``, rule.doc));
  else if (leaf) throw new Error(`${key}: every key needs a doc line in the schema`);
  if (rule.kind === 'section') for (const [name, child] of Object.entries(rule.keys)) rows(child, key === '' ? name : `${key}.${name}`, out);
  // The object form of a string-or-object key: its keys under the key's own name.
  if (rule.kind === 'stringOr') for (const [name, child] of Object.entries(rule.section.keys)) rows(child, `${key}.${name}`, out);
  if (rule.kind === 'strings' && rule.entries !== undefined)
    for (const [name, child] of Object.entries(rule.entries.keys)) rows(child, `${key}[].${name}`, out);
  // A list of objects (an upstream's targets): the keys of one entry under `<key>[]`.
  if (rule.kind === 'list' && rule.items.kind === 'section') for (const [name, child] of Object.entries(rule.items.keys)) rows(child, `${key}[].${name}`, out);
  if (rule.kind === 'map' && !leaf) {
    if (rule.entryDoc !== undefined) out.push(row(`${key}.<name>`, 'object', '—', rule.entryDoc));
    else rows(rule.values, `${key}.<name>`, out);
  }
  return out;
}

/** What goes between the markers: the note that says where the table comes from, and the table. */
export function tableText(): string {
  return [
    '<!-- Written from src/config/schema.ts by `npm run config:docs`: change the schema, not this table. -->',
    '',
    '| Key | Type | Default | Meaning |',
    '|---|---|---|---|',
    ...rows(CONFIG_SCHEMA, '', []),
    '',
  ].join('\n');
}

/** The text of the configuration reference, and where the table between its markers starts and ends. */
export function tableRegion(): { readonly file: string; readonly text: string; readonly start: number; readonly end: number } {
  const text = readFileSync(TABLE_FILE, 'utf8');
  const start = text.indexOf(TABLE_START);
  const end = text.indexOf(TABLE_END, start);
  if (start === -1 || end === -1) throw new Error(`docs/configuration.md has no table between ${TABLE_START} and ${TABLE_END}`);
  return { file: TABLE_FILE, text, start: start + TABLE_START.length + 1, end };
}

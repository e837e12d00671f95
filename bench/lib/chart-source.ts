/**
 * The figures a chart is drawn from, as they were recorded: the raw JSON a run writes under
 * bench/results/, or a run's table in bench/RESULTS.md.
 */
import { readFileSync } from 'node:fs';
import type { ChartInput, ChartRow } from './chart.ts';
import { describeRun, type RunInfo, type Summary } from './report.ts';

const TITLE = 'hypergate benchmark: req/s per scenario and server';
/**
 * herd's figure is its upstream request count: its req/s is one burst of 1,000 requests, not a
 * rate; download's is its MiB/s: its req/s counts 64 MB downloads.
 */
const NOT_RATES = new Set(['herd', 'download']);
const TABLE_HEAD = /^\| scenario \| server \| req\/s \|/m;

function rates(rows: readonly ChartRow[]): ChartRow[] {
  return rows.filter((r) => !NOT_RATES.has(r.scenario));
}

/** A run's raw JSON (bench/run.ts writeJson): its summary rows and reference. */
export function chartFromJson(file: string): ChartInput {
  const json = JSON.parse(readFileSync(file, 'utf8')) as RunInfo & { readonly reference?: string; readonly summary?: readonly Summary[] };
  if (!Array.isArray(json.summary)) throw new Error(`${file}: no "summary": not a result of npm run bench`);
  return { title: TITLE, subtitle: `${json.date}: ${describeRun(json)}`, reference: json.reference ?? 'baseline', rows: rates(json.summary) };
}

/** The run headed `## <heading>` in a bench/RESULTS.md, or the last one with a table of figures. */
export function chartFromResults(file: string, heading?: string): ChartInput {
  const sections = readFileSync(file, 'utf8')
    .split(/^## /m)
    .slice(1)
    .map((text) => ({ heading: text.slice(0, text.indexOf('\n')).trim(), lines: text.split('\n').slice(1) }))
    .filter((s) => s.lines.some((l) => TABLE_HEAD.test(l)));
  const section = heading === undefined ? sections.at(-1) : sections.find((s) => s.heading === heading);
  if (section === undefined)
    throw new Error(
      `${file}: no run${heading === undefined ? '' : ` headed "## ${heading}"`} with a table of figures (runs with one: ${sections.map((s) => s.heading).join(', ') || 'none'})`,
    );
  const head = section.lines.findIndex((l) => TABLE_HEAD.test(l));
  const reference = /\| req\/s × (.+?) \|/.exec(section.lines[head] ?? '')?.[1] ?? 'baseline';
  const rows: ChartRow[] = [];
  // The table's rows follow its head and the |---| line, up to the first line that is not a row.
  for (const line of section.lines.slice(head + 2)) {
    if (!line.startsWith('|')) break;
    const cells = line
      .split('|')
      .slice(1, -1)
      .map((c) => c.trim());
    const ratio = Number.parseFloat(cells[6] ?? '');
    rows.push({ scenario: cells[0] ?? '', server: cells[1] ?? '', reqPerSec: Number(cells[2]), ratio: Number.isNaN(ratio) ? null : ratio });
  }
  const info = section.lines.find((l) => l.trim() !== '') ?? '';
  return { title: TITLE, subtitle: `${section.heading}: ${info}`, reference, rows: rates(rows) };
}

/**
 * `npm run bench:chart`: draws the SVG chart of a recorded run (bench/lib/chart.ts), from a run's
 * raw JSON under bench/results/ or from a run's table in bench/RESULTS.md. `npm run bench` draws
 * one itself beside every JSON it writes (and in bench/chart.svg when it records); this redraws
 * any earlier run.
 */
import { writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { parseArgs } from '../src/lib/cli-args.ts';
import { renderChart } from './lib/chart.ts';
import { chartFromJson, chartFromResults } from './lib/chart-source.ts';
import { ROOT } from './lib/proc.ts';

const USAGE = `usage: npm run bench:chart -- [--from FILE] [--run HEADING] [--out FILE]

  --from FILE     a run's JSON (bench/results/bench-*.json) or a RESULTS.md (default bench/RESULTS.md)
  --run HEADING   with a RESULTS.md: the run headed "## HEADING" (default: the last run with a table)
  --out FILE      where the SVG goes (default bench/chart.svg)`;

try {
  const args = parseArgs(process.argv.slice(2), ['--from', '--run', '--out'], ['--help']);
  if (args.has('--help')) {
    process.stdout.write(`${USAGE}\n`);
  } else {
    const from = resolve(String(args.get('--from') ?? resolve(ROOT, 'bench/RESULTS.md')));
    const run = args.get('--run');
    const input = from.endsWith('.json') ? chartFromJson(from) : chartFromResults(from, typeof run === 'string' ? run : undefined);
    const out = resolve(String(args.get('--out') ?? resolve(ROOT, 'bench/chart.svg')));
    writeFileSync(out, renderChart(input));
    process.stdout.write(`${out}: ${input.rows.length} bars from ${input.subtitle.slice(0, 60)}…\n`);
  }
} catch (err) {
  process.stderr.write(`bench:chart: ${(err as Error).message}\n${USAGE}\n`);
  process.exitCode = 1;
}

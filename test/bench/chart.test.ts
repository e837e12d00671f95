/**
 * The benchmark chart (bench/lib/chart.ts) drawn from small recorded runs: well-formed SVG that
 * names every scenario and server, with the reference as the 1.0 line. No image comparison.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { renderChart, type ChartInput } from '../../bench/lib/chart.ts';
import { chartFromJson, chartFromResults } from '../../bench/lib/chart-source.ts';
import { appendResults, table, type RunInfo, type Summary } from '../../bench/lib/report.ts';

const dir = mkdtempSync(join(tmpdir(), 'hypergate-chart-'));
after(() => rmSync(dir, { recursive: true, force: true }));

interface Element {
  readonly name: string;
  readonly attributes: Readonly<Record<string, string>>;
  /** The text directly inside it, entities decoded. */
  text: string;
}

const ENTITIES: Readonly<Record<string, string>> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" };
const decode = (s: string): string => s.replace(/&(amp|lt|gt|quot|apos);/g, (_, e: string) => ENTITIES[e] ?? '');
/** Character data: no markup, and every & starts one of the five entities. */
const CHAR_DATA = /^(?:[^<&]|&(?:amp|lt|gt|quot|apos);)*$/;

/** A strict little XML reader: throws unless tags balance under one root and every attribute and text is well-formed. */
function parseXml(xml: string): Element[] {
  const elements: Element[] = [];
  const open: Element[] = [];
  let rootsClosed = 0;
  const token = /<(\/?)([A-Za-z][\w:-]*)((?:\s+[\w:-]+="[^"]*")*)\s*(\/?)>|([^<]+)|(<)/y;
  for (let at = 0; at < xml.length; at = token.lastIndex) {
    token.lastIndex = at;
    const [, closing, name, attrs, selfClosing, text, stray] = token.exec(xml) ?? [];
    if (stray !== undefined) throw new Error(`unreadable markup at ${at}`);
    if (text !== undefined) {
      if (!CHAR_DATA.test(text)) throw new Error(`bad character data at ${at}: ${text.slice(0, 40)}`);
      if (open.length > 0) (open.at(-1) as Element).text += decode(text);
      else if (text.trim() !== '') throw new Error('text outside the root element');
    } else if (closing === '/') {
      const top = open.pop();
      if (top?.name !== name) throw new Error(`</${name}> closes <${top?.name ?? 'nothing'}>`);
      if (open.length === 0) rootsClosed++;
    } else {
      if (open.length === 0 && elements.length > 0) throw new Error('more than one root element');
      const attributes: Record<string, string> = {};
      for (const [, key, value] of (attrs ?? '').matchAll(/([\w:-]+)="([^"]*)"/g)) {
        if (!CHAR_DATA.test(value as string)) throw new Error(`bad attribute value ${key}="${value}"`);
        if ((key as string) in attributes) throw new Error(`attribute ${key} twice`);
        attributes[key as string] = decode(value as string);
      }
      const element: Element = { name: name as string, attributes, text: '' };
      elements.push(element);
      if (selfClosing !== '/') open.push(element);
      else if (open.length === 0) rootsClosed++;
    }
  }
  if (open.length > 0) throw new Error(`<${open.map((e) => e.name).join('>, <')}> never closed`);
  if (elements[0]?.name !== 'svg' || rootsClosed !== 1) throw new Error('not one <svg> root');
  return elements;
}

const texts = (elements: readonly Element[]): string[] => elements.filter((e) => e.name === 'text').map((e) => e.text);

function summary(scenario: string, server: string, reqPerSec: number, reference: number): Summary {
  return {
    scenario,
    server,
    rounds: 1,
    reqPerSec,
    p50Us: 1000,
    p99Us: 2000,
    errors: 0,
    cpuUsPerRequest: 12,
    upstreamRequests: 0,
    ratio: reqPerSec / reference,
    p99Ratio: 1,
  };
}

const SUMMARY: readonly Summary[] = [
  summary('hot', 'baseline', 90_000, 90_000),
  summary('hot', 'hypergate', 81_000, 90_000),
  summary('hot', 'fastify-cache', 46_000, 90_000),
  summary('wide', 'baseline', 88_000, 88_000),
  summary('wide', 'hypergate', 75_000, 88_000),
  summary('wide', 'fastify-cache', 40_000, 88_000),
  summary('herd', 'baseline', 25_000, 25_000),
  summary('herd', 'hypergate', 13_000, 25_000),
];
const INFO: RunInfo = { date: '2026-11-24T09:00:00.000Z', node: 'v20.20.2', cpu: 'Test CPU', cores: 2, tool: 'wrk (-t1)', options: { rounds: 1 } };

describe('the benchmark chart', () => {
  test('a chart of a small run is well-formed SVG naming every scenario and server, with the baseline as the 1.0 line', () => {
    const file = join(dir, 'run.json');
    writeFileSync(file, JSON.stringify({ ...INFO, reference: 'baseline', summary: SUMMARY }));
    const elements = parseXml(renderChart(chartFromJson(file)));
    const words = texts(elements);
    for (const name of ['hot', 'wide', 'baseline', 'hypergate', 'fastify-cache'])
      assert.ok(words.includes(name), `no <text> saying ${name}: ${words.join(' | ')}`);
    assert.ok(words.includes('baseline = 1.0'));
    assert.ok(words.includes('81.0k') && words.includes('46.0k'), 'bars are labelled with their req/s');
    // herd's req/s is a burst, not a rate: it is left out.
    assert.ok(!words.includes('herd'));
    // Six bars, each as tall as its ratio: the baseline's reach the 1.0 line.
    const bars = elements.filter((e) => e.name === 'rect' && e.attributes['fill'] !== '#ffffff' && Number(e.attributes['width']) > 12);
    assert.equal(bars.length, 6);
    const line = elements.find((e) => e.name === 'line' && e.attributes['stroke-dasharray'] !== undefined);
    const heights = bars.map((b) => Number(b.attributes['height']));
    const tallest = Math.max(...heights);
    assert.ok(Math.abs(Number(bars[0]?.attributes['y']) - Number(line?.attributes['y1'])) < 0.5, 'the baseline bar reaches the 1.0 line');
    assert.ok(Math.abs((heights[1] as number) / tallest - 0.9) < 0.01, 'hypergate on hot is drawn at 0.9');
  });

  test('names with XML special characters are escaped, so the chart stays well-formed', () => {
    const input: ChartInput = {
      title: 'a <b> & "c"',
      subtitle: "it's",
      reference: 'hypergate@a&b',
      rows: [
        { scenario: 'hot<1>', server: 'hypergate@a&b', reqPerSec: 1000, ratio: 1 },
        { scenario: 'hot<1>', server: 'hypergate', reqPerSec: 900, ratio: 0.9 },
      ],
    };
    const words = texts(parseXml(renderChart(input)));
    for (const name of ['hot<1>', 'hypergate@a&b', 'hypergate', 'hypergate@a&b = 1.0']) assert.ok(words.includes(name), `${name}: ${words.join(' | ')}`);
  });

  test("a run's table in bench/RESULTS.md gives the same chart figures as its JSON", () => {
    const json = join(dir, 'same.json');
    writeFileSync(json, JSON.stringify({ ...INFO, reference: 'baseline', summary: SUMMARY }));
    const results = join(dir, 'RESULTS.md');
    appendResults(results, { ...INFO, date: 'older' }, `${table(SUMMARY.slice(0, 2), 'baseline')}\n`);
    appendResults(results, INFO, `${table(SUMMARY, 'baseline')}\n\n- a note\n`);
    appendResults(results, { ...INFO, date: 'profile only' }, 'CPU profile: no table\n');
    const fromTable = chartFromResults(results);
    const fromJson = chartFromJson(json);
    assert.equal(fromTable.reference, 'baseline');
    assert.deepEqual(
      fromTable.rows.map((r) => [r.scenario, r.server, r.reqPerSec, r.ratio]),
      fromJson.rows.map((r) => [r.scenario, r.server, Math.round(r.reqPerSec), Number((r.ratio ?? 0).toFixed(2))]),
    );
    assert.equal(chartFromResults(results, 'older').rows.length, 2);
    assert.throws(() => chartFromResults(results, 'profile only'), /no run headed "## profile only" with a table/);
  });
});

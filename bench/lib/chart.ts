/**
 * The picture of a run: req/s per scenario and server as bars, measured against the reference
 * server (the baseline, or the first --compare checkout) drawn as the 1.0 line, each bar labelled
 * with its req/s. Plain SVG written as text: no browser, no native dependency.
 */

export interface ChartRow {
  readonly scenario: string;
  readonly server: string;
  readonly reqPerSec: number;
  /** req/s over the reference server's in the same scenario; null without one. */
  readonly ratio: number | null;
}

export interface ChartInput {
  readonly title: string;
  /** The run: date, Node, CPU, load generator, options. */
  readonly subtitle: string;
  /** The server whose req/s is 1.0. */
  readonly reference: string;
  readonly rows: readonly ChartRow[];
}

const BAR = 26;
const GROUP_GAP = 30;
const LEFT = 64;
const RIGHT = 24;
const TOP = 104;
const PLOT_HEIGHT = 280;
const BOTTOM = 56;
/** Reference first in grey, then hypergate's blue, then the peers. */
const COLOURS = ['#9e9e9e', '#1f77b4', '#ff7f0e', '#2ca02c', '#9467bd', '#8c564b', '#e377c2', '#17becf'];

/** Text and attribute values: the five XML special characters as entities. */
export function escapeXml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&${({ '&': 'amp', '<': 'lt', '>': 'gt', '"': 'quot', "'": 'apos' } as const)[c as '&']};`);
}

const n = (x: number): string => String(Math.round(x * 10) / 10);

/** 65,773 → "65.8k", 8,379 → "8.4k", 950 → "950". */
export function shortRate(reqPerSec: number): string {
  return reqPerSec >= 1000 ? `${(reqPerSec / 1000).toFixed(1)}k` : String(Math.round(reqPerSec));
}

/** Words into at most `maxLines` lines of about `width` characters; the last one ends in … when cut. */
function wrap(text: string, width: number, maxLines: number): string[] {
  const lines: string[] = [];
  let line = '';
  for (const word of text.split(' ')) {
    if (line !== '' && line.length + 1 + word.length > width) {
      lines.push(line);
      line = word;
    } else {
      line = line === '' ? word : `${line} ${word}`;
    }
  }
  lines.push(line);
  if (lines.length <= maxLines) return lines;
  const kept = lines.slice(0, maxLines);
  kept[maxLines - 1] = `${(kept[maxLines - 1] as string).slice(0, width - 1)}…`;
  return kept;
}

function unique(values: readonly string[]): string[] {
  return [...new Set(values)];
}

/** The top of the ratio axis and its tick step: room above the tallest bar and the 1.0 line. */
function axis(rows: readonly ChartRow[]): { top: number; step: number } {
  const highest = Math.max(1, ...rows.map((r) => r.ratio ?? 0));
  const step = highest <= 1.5 ? 0.25 : highest <= 4 ? 0.5 : Math.ceil(highest / 8);
  return { top: Math.ceil((highest * 1.08) / step) * step, step };
}

export function renderChart(input: ChartInput): string {
  const scenarios = unique(input.rows.map((r) => r.scenario));
  const servers = unique([input.reference, ...input.rows.map((r) => r.server)]).filter((s) => input.rows.some((r) => r.server === s));
  const colour = (server: string): string => COLOURS[servers.indexOf(server) % COLOURS.length] as string;
  const groupWidth = servers.length * BAR + GROUP_GAP;
  const width = Math.max(640, LEFT + scenarios.length * groupWidth + RIGHT);
  const height = TOP + PLOT_HEIGHT + BOTTOM;
  const { top, step } = axis(input.rows);
  const y = (ratio: number): number => TOP + PLOT_HEIGHT - (ratio / top) * PLOT_HEIGHT;
  const out: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="Helvetica, Arial, sans-serif" font-size="12">`,
    `<title>${escapeXml(input.title)}</title>`,
    `<rect x="0" y="0" width="${width}" height="${height}" fill="#ffffff"/>`,
    `<text x="${LEFT}" y="22" font-size="15" font-weight="bold">${escapeXml(input.title)}</text>`,
    ...wrap(input.subtitle, Math.floor((width - LEFT - RIGHT) / 5.2), 2).map(
      (line, i) => `<text x="${LEFT}" y="${38 + i * 13}" font-size="10" fill="#555555">${escapeXml(line)}</text>`,
    ),
  ];
  // Legend: one swatch per server, in bar order.
  let legendX = LEFT;
  for (const server of servers) {
    out.push(`<rect x="${legendX}" y="62" width="12" height="12" fill="${colour(server)}"/>`, `<text x="${legendX + 16}" y="72">${escapeXml(server)}</text>`);
    legendX += 28 + server.length * 7;
  }
  // Ratio axis with its grid.
  for (let tick = 0; tick <= top + 1e-9; tick += step) {
    out.push(
      `<line x1="${LEFT}" y1="${n(y(tick))}" x2="${width - RIGHT}" y2="${n(y(tick))}" stroke="#e6e6e6"/>`,
      `<text x="${LEFT - 6}" y="${n(y(tick) + 4)}" text-anchor="end" fill="#555555">${tick.toFixed(step < 0.5 ? 2 : 1)}×</text>`,
    );
  }
  out.push(
    `<text x="14" y="${n(TOP + PLOT_HEIGHT / 2)}" transform="rotate(-90 14 ${n(TOP + PLOT_HEIGHT / 2)})" text-anchor="middle" fill="#555555">req/s × ${escapeXml(input.reference)}</text>`,
  );
  scenarios.forEach((scenario, g) => {
    const x0 = LEFT + GROUP_GAP / 2 + g * groupWidth;
    servers.forEach((server, i) => {
      const row = input.rows.find((r) => r.scenario === scenario && r.server === server);
      if (row === undefined) return;
      const x = x0 + i * BAR;
      const label = `${shortRate(row.reqPerSec)}`;
      if (row.ratio === null) {
        out.push(`<text x="${n(x + BAR / 2)}" y="${n(y(0) - 4)}" text-anchor="middle" font-size="9">${label}</text>`);
        return;
      }
      const tip = `${server}, ${scenario}: ${Math.round(row.reqPerSec).toLocaleString('en')} req/s (${row.ratio.toFixed(2)}× ${input.reference})`;
      out.push(
        `<rect x="${n(x + 2)}" y="${n(y(row.ratio))}" width="${BAR - 4}" height="${n(y(0) - y(row.ratio))}" fill="${colour(server)}"><title>${escapeXml(tip)}</title></rect>`,
        `<text x="${n(x + BAR / 2)}" y="${n(y(row.ratio) - 4)}" text-anchor="middle" font-size="9">${label}</text>`,
      );
    });
    out.push(
      `<text x="${n(x0 + (servers.length * BAR) / 2)}" y="${TOP + PLOT_HEIGHT + 18}" text-anchor="middle" font-weight="bold">${escapeXml(scenario)}</text>`,
    );
  });
  // The reference's own level, over the bars.
  out.push(
    `<line x1="${LEFT}" y1="${n(y(1))}" x2="${width - RIGHT}" y2="${n(y(1))}" stroke="#d62728" stroke-width="1.5" stroke-dasharray="6 4"/>`,
    `<text x="${width - RIGHT}" y="${n(y(1) - 5)}" text-anchor="end" fill="#d62728">${escapeXml(input.reference)} = 1.0</text>`,
    `<line x1="${LEFT}" y1="${y(0)}" x2="${width - RIGHT}" y2="${y(0)}" stroke="#333333"/>`,
    `<text x="${LEFT}" y="${height - 12}" font-size="10" fill="#555555">Bars: req/s over ${escapeXml(input.reference)}'s in the same scenario; labels: req/s (median of the rounds).</text>`,
    '</svg>',
  );
  return `${out.join('\n')}\n`;
}

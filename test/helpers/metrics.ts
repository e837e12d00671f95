/** One sample of a Prometheus text exposition, found by metric name and exact labels. */
export function sample(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  for (const line of text.split('\n')) {
    if (line.startsWith('#')) continue;
    const space = line.lastIndexOf(' ');
    const head = line.slice(0, space);
    const brace = head.indexOf('{');
    const metric = brace === -1 ? head : head.slice(0, brace);
    if (metric !== name) continue;
    const found: Record<string, string> = {};
    if (brace !== -1) {
      for (const m of head.slice(brace + 1, -1).matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)) found[m[1] as string] = m[2] as string;
    }
    const wanted = Object.entries(labels);
    if (wanted.length === Object.keys(found).length && wanted.every(([k, v]) => found[k] === v)) return Number(line.slice(space + 1));
  }
  return undefined;
}

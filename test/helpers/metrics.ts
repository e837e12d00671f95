/**
 * One sample of a Prometheus text exposition, found by metric name and labels: every label given
 * must match, and the sample may carry only those plus `service` (upstream metrics are per
 * service; a test that names none means the one service it has).
 */
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
    const extra = Object.keys(found).filter((k) => !(k in labels));
    if (extra.every((k) => k === 'service') && wanted.every(([k, v]) => found[k] === v)) return Number(line.slice(space + 1));
  }
  return undefined;
}

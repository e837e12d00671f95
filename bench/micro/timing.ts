/**
 * Plain timing loops for the micro-benchmarks: warm up, then run batches until the time is up,
 * reading process.hrtime.bigint() once per batch. Results go to a module-level sink so the
 * compiler cannot drop the work.
 */
export interface Timing {
  readonly name: string;
  readonly opsPerSec: number;
  readonly nsPerOp: number;
}

export interface Comparison {
  readonly title: string;
  /** Which row hypergate's hot path uses, and why it matters. */
  readonly choice: string;
  readonly rows: readonly Timing[];
}

export let sink: unknown;

/** Runs `fn` in batches for `ms` after a warm-up of a quarter of that (so the JIT has settled). */
export function measure(name: string, fn: (i: number) => unknown, ms = 300, batch = 1000): Timing {
  const loop = (forMs: number): { ops: number; ns: number } => {
    let ops = 0;
    const start = process.hrtime.bigint();
    const end = start + BigInt(Math.round(forMs * 1e6));
    let now = start;
    while (now < end) {
      for (let i = 0; i < batch; i++) sink = fn(ops + i);
      ops += batch;
      now = process.hrtime.bigint();
    }
    return { ops, ns: Number(now - start) };
  };
  loop(Math.max(50, ms / 4));
  const { ops, ns } = loop(ms);
  return { name, opsPerSec: (ops * 1e9) / ns, nsPerOp: ns / ops };
}

/** One call at a time, each awaited: the rate of a promise-returning operation. */
export async function measureAsync(name: string, fn: (i: number) => Promise<unknown>, ms = 300): Promise<Timing> {
  for (let i = 0; i < 50; i++) sink = await fn(i);
  let ops = 0;
  const start = process.hrtime.bigint();
  const end = start + BigInt(ms) * 1_000_000n;
  let now = start;
  while (now < end) {
    sink = await fn(ops++);
    if ((ops & 15) === 0) now = process.hrtime.bigint();
  }
  now = process.hrtime.bigint();
  const ns = Number(now - start);
  return { name, opsPerSec: (ops * 1e9) / ns, nsPerOp: ns / ops };
}

export type Variant = readonly [name: string, fn: (i: number) => unknown];

/**
 * The variants measured in turn, `rounds` times each for ms / rounds, and each one's median: on a
 * shared machine a single pass favours whichever variant ran in the quiet moment.
 */
export function interleaved(variants: readonly Variant[], ms: number, rounds = 3): Timing[] {
  const runs = variants.map((): Timing[] => []);
  for (let r = 0; r < rounds; r++) variants.forEach(([name, fn], k) => runs[k]?.push(measure(name, fn, ms / rounds)));
  return runs.map((list) => [...list].sort((a, b) => a.opsPerSec - b.opsPerSec)[Math.floor(list.length / 2)] as Timing);
}

function fmt(n: number): string {
  if (n >= 1e6) return `${(n / 1e6).toFixed(2)}M`;
  if (n >= 1e3) return `${(n / 1e3).toFixed(1)}k`;
  return n.toFixed(0);
}

/** A markdown table: each row against the first (hypergate's choice comes first). */
export function table(c: Comparison): string {
  const first = c.rows[0]?.opsPerSec ?? 1;
  const lines = [`### ${c.title}`, '', c.choice, '', '| variant | ops/s | ns/op | × first |', '| --- | ---: | ---: | ---: |'];
  for (const r of c.rows) lines.push(`| ${r.name} | ${fmt(r.opsPerSec)} | ${r.nsPerOp.toFixed(1)} | ${(r.opsPerSec / first).toFixed(2)} |`);
  return `${lines.join('\n')}\n`;
}

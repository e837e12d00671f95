/**
 * Whether the interleaved rounds of two servers say which is faster, or are too noisy to decide.
 *
 * The rule (printed under every comparison): a difference is decided when each side has at least
 * MIN_ROUNDS rounds, neither side's rounds have a coefficient of variation (standard deviation
 * over mean) above MAX_CV, and the difference between the two medians is larger than the spread
 * (max − min, over the median) of either side's rounds. Otherwise it is "too noisy to decide",
 * with the reason.
 */
import { median } from './report.ts';

export const MIN_ROUNDS = 3;
export const MAX_CV = 0.05;

export const RULE = `A difference is decided when each side has at least ${MIN_ROUNDS} rounds, neither side's rounds vary by more than ${MAX_CV * 100}% (coefficient of variation: standard deviation over mean), and the difference between the medians is larger than the spread (max − min, over the median) of either side's rounds; otherwise it is too noisy to decide.`;

/** (max − min) / median; 0 for fewer than two values. */
export function spread(xs: readonly number[]): number {
  if (xs.length < 2) return 0;
  return (Math.max(...xs) - Math.min(...xs)) / median(xs);
}

/** Sample standard deviation over the mean; 0 for fewer than two values. */
export function cv(xs: readonly number[]): number {
  if (xs.length < 2) return 0;
  const mean = xs.reduce((a, b) => a + b, 0) / xs.length;
  const variance = xs.reduce((a, x) => a + (x - mean) ** 2, 0) / (xs.length - 1);
  return Math.sqrt(variance) / mean;
}

export interface Verdict {
  /** median(b) / median(a). */
  readonly ratio: number;
  readonly decided: boolean;
  /** "7.7% lower", or "too noisy to decide: ..." */
  readonly text: string;
}

const pct = (x: number): string => `${(x * 100).toFixed(1)}%`;

/**
 * `a` and `b`: one figure per round of each side (say req/s). `names`: how the verdict names the
 * two sides. The text says how b's median stands to a's ("higher"/"lower", or the words given).
 */
export function decide(
  a: readonly number[],
  b: readonly number[],
  names: { readonly a: string; readonly b: string },
  words: { readonly up: string; readonly down: string } = { up: 'higher', down: 'lower' },
): Verdict {
  const ratio = median(b) / median(a);
  const difference = Math.abs(ratio - 1);
  const reasons: string[] = [];
  const rounds = Math.min(a.length, b.length);
  if (rounds < MIN_ROUNDS) reasons.push(`${rounds} round${rounds === 1 ? '' : 's'} (at least ${MIN_ROUNDS} needed to see the noise)`);
  for (const [name, xs] of [
    [names.a, a],
    [names.b, b],
  ] as const) {
    if (cv(xs) > MAX_CV) reasons.push(`${name}'s rounds vary by ${pct(cv(xs))} (above ${pct(MAX_CV)})`);
    else if (rounds >= MIN_ROUNDS && spread(xs) >= difference)
      reasons.push(`the difference (${pct(difference)}) is within the spread of ${name}'s rounds (${pct(spread(xs))})`);
  }
  if (reasons.length > 0) return { ratio, decided: false, text: `too noisy to decide: ${reasons.join('; ')}` };
  return { ratio, decided: true, text: `${pct(difference)} ${ratio > 1 ? words.up : words.down}` };
}

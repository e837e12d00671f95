/**
 * The event loop's delays in a hypergate under load, as the gateway itself measures them: its
 * /metrics (prom-client's default metrics, on in production) holds a histogram of
 * `perf_hooks.monitorEventLoopDelay` (a libuv timer every 10 ms, off the request path), and each
 * scrape reads it and starts it over. The harness scrapes once before the measured part (which
 * empties it) and once after: the max and p99 of that scrape are the measured part's. A pause of
 * tens of ms (a long garbage collection, a large write, a sweep) shows as the max.
 *
 * The histogram records the time between two of the timer's runs, the 10 ms it waits included
 * (Node's ELDHistogram records each whole interval); the delay is what is past those 10 ms.
 */
import { httpGet } from './http.ts';

export interface LoopDelay {
  /** Longest delay of the event loop over the measured part, in ms. */
  readonly maxMs: number;
  /** Its 99th percentile, in ms. */
  readonly p99Ms: number;
}

/** prom-client's default eventLoopMonitoringPrecision: the timer's period, in ms. */
const RESOLUTION_MS = 10;

/** A gauge's value from Prometheus text, or undefined when the metric is not there. */
function gauge(text: string, name: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${name} `) || l.startsWith(`${name}{`));
  if (line === undefined) return undefined;
  const value = Number(line.slice(line.lastIndexOf(' ') + 1));
  return Number.isFinite(value) ? value : undefined;
}

/**
 * Scrapes `/metrics` on the admin port: the loop's delays since the last scrape, or null when the
 * server exposes none (an older checkout without them, or no admin listener).
 */
export async function scrapeLoopDelay(adminPort: number | undefined): Promise<LoopDelay | null> {
  if (adminPort === undefined) return null;
  const answer = await httpGet(`http://127.0.0.1:${adminPort}/metrics`, {});
  if (answer.status !== 200) return null;
  const text = answer.body.toString();
  const max = gauge(text, 'nodejs_eventloop_lag_max_seconds');
  const p99 = gauge(text, 'nodejs_eventloop_lag_p99_seconds');
  if (max === undefined || p99 === undefined) return null;
  const delay = (seconds: number): number => Math.max(0, seconds * 1000 - RESOLUTION_MS);
  return { maxMs: delay(max), p99Ms: delay(p99) };
}

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { PROJECT_ROOT } from '../../src/config/load.ts';
import { startGateway, type RunningGateway } from '../helpers/gateway.ts';

/**
 * The metric names of each row of the "Metrics" table of docs/operations.md, in order. The row of `hypergate_redis_*`
 * (metrics that exist only with redis.url) is left out: test/cluster covers those.
 */
function metricRows(): string[][] {
  const text = readFileSync(resolve(PROJECT_ROOT, 'docs/operations.md'), 'utf8');
  const start = text.indexOf('\n## Metrics');
  if (start === -1) throw new Error('docs/operations.md has no "## Metrics" section');
  const end = text.indexOf('\n## ', start + 1);
  const rows: string[][] = [];
  for (const line of text.slice(start, end).split('\n')) {
    const first = line.split('|')[1];
    if (first === undefined || first.includes('*')) continue;
    const names = [...first.matchAll(/`(hypergate_[a-z_]+)`/g)].map((m) => m[1] as string);
    if (names.length > 0) rows.push(names);
  }
  return rows;
}

describe('the "Metrics" table of docs/operations.md', () => {
  let gw: RunningGateway;
  before(async () => {
    gw = await startGateway({});
  });
  after(() => gw.close());

  test('names each metric in one row only', () => {
    const seen = new Set<string>();
    const twice = metricRows()
      .flat()
      .filter((name) => seen.has(name) || (seen.add(name), false));
    assert.deepEqual(twice, []);
  });

  test('names only metrics a gateway exports', async () => {
    const exported = new Set((await gw.gateway.metrics.registry.getMetricsAsJSON()).map((m) => m.name));
    const listed = metricRows().flat();
    assert.ok(listed.length > 10, `too few metric names read from the table: ${listed.join(', ')}`);
    assert.deepEqual(
      listed.filter((name) => !exported.has(name)),
      [],
    );
  });
});

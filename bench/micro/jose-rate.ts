/**
 * jose's raw ES256 verify rate for the harness's fresh-tokens comparison, run as a child on the
 * server core with the run's own key and tokens:
 *   node --import tsx bench/micro/jose-rate.ts <request list> <public key pem> <ms>
 * Prints `HB_JSON {"opsPerSec":...}`.
 */
import { readFileSync } from 'node:fs';
import { joseEs256Rate } from './jose-verify.ts';

const [listFile, pemFile, ms] = process.argv.slice(2) as [string, string, string];
const tokens = readFileSync(listFile, 'utf8')
  .split('\n')
  .filter((l) => l.includes(' '))
  .slice(0, 50_000)
  .map((l) => l.slice(l.indexOf(' ') + 1));
const timing = await joseEs256Rate(tokens, readFileSync(pemFile, 'utf8'), Number(ms));
process.stdout.write(`HB_JSON ${JSON.stringify({ opsPerSec: timing.opsPerSec })}\n`);

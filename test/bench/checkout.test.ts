/**
 * The harness starts each hypergate checkout as its own `npm start` does (bench/lib/checkout.ts):
 * this one's compiled dist/main.js (started for real in harness.test.ts, the one suite that builds
 * the checkout's dist/), an older one's TypeScript through tsx.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { startCommand } from '../../bench/lib/checkout.ts';
const dir = mkdtempSync(join(tmpdir(), 'hypergate-checkout-'));
after(() => rmSync(dir, { recursive: true, force: true }));

function checkoutWith(start: string): string {
  const root = mkdtempSync(join(dir, 'checkout-'));
  writeFileSync(join(root, 'package.json'), JSON.stringify({ scripts: { start } }));
  return root;
}

describe('how the harness starts a checkout', () => {
  test("an older checkout's start script (TypeScript through tsx) is read as it was", () => {
    const root = checkoutWith('exec node --import tsx src/main.ts');
    assert.deepEqual(startCommand(root), { nodeFlags: ['--import', 'tsx'], entry: join(root, 'src/main.ts') });
    assert.deepEqual(startCommand(checkoutWith('node --import tsx src/main.ts')).nodeFlags, ['--import', 'tsx']);
  });

  test('a start script that is not a plain node command is refused, naming the script', () => {
    for (const script of ['tsx src/main.ts', 'exec node dist/main.js && echo done', 'node "$ENTRY"', 'node --enable-source-maps']) {
      assert.throws(
        () => startCommand(checkoutWith(script)),
        (err: Error) => err.message.includes(JSON.stringify(script)),
        script,
      );
    }
  });
});

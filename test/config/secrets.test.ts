import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, describe, it } from 'node:test';
import { PROJECT_ROOT } from '../../src/config/load.ts';
import { redactUrl } from '../../src/config/redact.ts';
import { configProblems, problemsOf } from '../helpers/config.ts';
import { loadConfig } from '../../src/gateway/load-config.ts';

const PASSWORD = 'hunter2-S3CRET';
const URL_WITH_PASSWORD = `http://alice:${PASSWORD}@upstream.internal:8081`;

describe('secrets never appear in config problems', () => {
  it('shows the credentials of a URL as ***, the rest of it as given', () => {
    const problems = configProblems({ upstream: { url: URL_WITH_PASSWORD } });
    assert.deepEqual(problems, [
      'upstream.url: expected an http(s) URL without credentials, query or fragment, or null, got "http://***:***@upstream.internal:8081/"',
    ]);
  });

  it('hides the credentials of a URL too long to show whole, and of one that does not parse', () => {
    const long = `https://svc-account:${PASSWORD}@customers.internal.example.com:8443/v1`;
    const broken = `http://alice:${PASSWORD} @up:x`;
    for (const url of [long, broken]) {
      const problems = configProblems({ auth: { jwksUrl: url } }).join('\n');
      assert.match(problems, /^auth\.jwksUrl: expected an http\(s\) URL/);
      assert.equal(problems.includes(PASSWORD), false, problems);
      assert.equal(problems.includes(PASSWORD.slice(0, 6)), false, problems);
    }
  });

  it('hides the credentials of a URL given in an environment variable', () => {
    const problems = problemsOf(() => loadConfig({ env: { HYPERGATE_UPSTREAM_URL: URL_WITH_PASSWORD } }));
    assert.equal(problems.length, 1);
    assert.match(problems[0] ?? '', /^HYPERGATE_UPSTREAM_URL \(upstream\.url\): .*got "http:\/\/\*\*\*:\*\*\*@upstream\.internal:8081\/"$/);
  });

  it('never shows the value of auth.secret, even one of the wrong type', () => {
    const problems = configProblems({ auth: { secret: 31415926535, algorithms: ['HS256'] } });
    assert.deepEqual(problems, ['auth.secret: expected a non-empty string or null, got a number (not shown: the key holds a secret)']);
  });

  it('redacts the user and password of any URL scheme (a Redis URL), and leaves a URL without them alone', () => {
    assert.equal(redactUrl('redis://cache-user:s3cret@redis.internal:6379/0'), 'redis://***:***@redis.internal:6379/0');
    assert.equal(redactUrl('rediss://:s3cret@redis.internal:6380'), 'rediss://:***@redis.internal:6380');
    assert.equal(redactUrl('https://idp.example/jwks?x=a@b'), 'https://idp.example/jwks?x=a@b');
    assert.equal(redactUrl('not a url, user:s3cret@host'), '***@host');
  });
});

describe('secrets never appear in the output of a real process', () => {
  const dir = mkdtempSync(join(tmpdir(), 'hypergate-secrets-'));
  after(() => rmSync(dir, { recursive: true, force: true }));

  function run(args: readonly string[], env: Record<string, string>): { status: number | null; out: string } {
    const child = spawnSync(process.execPath, ['--import', 'tsx', resolve(PROJECT_ROOT, 'src/main.ts'), ...args], {
      cwd: PROJECT_ROOT,
      env: { ...process.env, HYPERGATE_ADMIN_PORT: 'null', ...env },
      encoding: 'utf8',
      timeout: 20_000,
    });
    return { status: child.status, out: child.stdout + child.stderr };
  }

  it('--check-config names the bad URL without its password, from a file and from the environment', () => {
    const file = join(dir, 'bad-url.json');
    writeFileSync(file, JSON.stringify({ upstream: { url: URL_WITH_PASSWORD }, auth: { secret: 31415926535 } }));
    const fromFile = run(['--check-config', '--config', file], {});
    assert.equal(fromFile.status, 1, fromFile.out);
    assert.match(fromFile.out, /upstream\.url: .*http:\/\/\*\*\*:\*\*\*@upstream\.internal:8081\//);
    assert.match(fromFile.out, /auth\.secret: /);
    const fromEnv = run(['--check-config'], { HYPERGATE_UPSTREAM_URL: URL_WITH_PASSWORD });
    assert.equal(fromEnv.status, 1, fromEnv.out);
    assert.match(fromEnv.out, /HYPERGATE_UPSTREAM_URL \(upstream\.url\): /);
    for (const out of [fromFile.out, fromEnv.out]) {
      assert.equal(out.includes(PASSWORD), false, out);
      assert.equal(out.includes('31415926535'), false, out);
    }
  });

  it('start-up refuses a URL with a password without printing the password', () => {
    const started = run([], { HYPERGATE_UPSTREAM_URL: URL_WITH_PASSWORD, HYPERGATE_SERVER_PORT: '0' });
    assert.equal(started.status, 1, started.out);
    assert.match(started.out, /invalid configuration, not starting/);
    assert.equal(started.out.includes(PASSWORD), false, started.out);
  });
});

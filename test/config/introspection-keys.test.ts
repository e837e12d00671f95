import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, describe, it } from 'node:test';
import { redactedConfig } from '../../src/admin/redacted-config.ts';
import { PROJECT_ROOT } from '../../src/config/load.ts';
import { configWith } from '../../src/gateway/load-config.ts';
import { configProblems, SOME_UPSTREAM } from '../helpers/config.ts';

const SECRET = 'introspection-S3CRET-value';
process.env['HG_TEST_CHECK_CLIENT'] = 'gateway';
process.env['HG_TEST_CHECK_SECRET'] = SECRET;

const INTROSPECTION = {
  url: 'https://idp.example.com/realms/shop/protocol/openid-connect/token/introspect',
  clientId: { env: 'HG_TEST_CHECK_CLIENT' },
  clientSecret: { env: 'HG_TEST_CHECK_SECRET' },
};

describe('auth.introspection', () => {
  it('loads with both client credentials in the environment', () => {
    assert.deepEqual(configProblems({ upstream: SOME_UPSTREAM, auth: { jwksUrl: 'https://idp.example.com/jwks', introspection: INTROSPECTION } }), []);
  });

  it('needs both client credentials, and names a variable that is unset or empty (never a value)', () => {
    const missing = configProblems({ auth: { introspection: { ...INTROSPECTION, clientId: null } } });
    assert.ok(
      missing.some((p) => p.startsWith('auth.introspection.clientId: required with auth.introspection.url')),
      missing.join('\n'),
    );
    const unset = configProblems({ auth: { introspection: { ...INTROSPECTION, clientSecret: { env: 'HG_TEST_NOT_SET_ANYWHERE' } } } });
    assert.ok(unset.includes('auth.introspection.clientSecret: the environment variable HG_TEST_NOT_SET_ANYWHERE is not set'), unset.join('\n'));
  });

  it('shows neither credential in the admin config view', () => {
    const shown = redactedConfig(configWith({ auth: { introspection: INTROSPECTION } })) as { auth: { introspection: Record<string, unknown> } };
    assert.equal(shown.auth.introspection['clientId'], '[redacted]');
    assert.equal(shown.auth.introspection['clientSecret'], '[redacted]');
    assert.equal(JSON.stringify(shown).includes(SECRET), false);
  });

  describe('--check-config', () => {
    const dir = mkdtempSync(join(tmpdir(), 'hypergate-introspection-'));
    after(() => rmSync(dir, { recursive: true, force: true }));

    it('exits 1 naming the client secret variable that is not set', () => {
      const file = join(dir, 'config.json');
      writeFileSync(
        file,
        JSON.stringify({ upstream: SOME_UPSTREAM, auth: { introspection: { ...INTROSPECTION, clientSecret: { env: 'HG_TEST_UNSET_SECRET' } } } }),
      );
      const env: NodeJS.ProcessEnv = { ...process.env, HYPERGATE_ADMIN_PORT: 'null' };
      delete env['HG_TEST_UNSET_SECRET'];
      const run = spawnSync(process.execPath, ['--import', 'tsx', resolve(PROJECT_ROOT, 'src/main.ts'), '--check-config', '--config', file], {
        cwd: PROJECT_ROOT,
        env,
        encoding: 'utf8',
        timeout: 30_000,
      });
      const out = run.stdout + run.stderr;
      assert.equal(run.status, 1, out);
      assert.match(out, /auth\.introspection\.clientSecret: the environment variable HG_TEST_UNSET_SECRET is not set/);
    });
  });
});

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, describe, test } from 'node:test';
import { PROJECT_ROOT } from '../../src/config/load.ts';
import { implicitVaryNotes } from '../../src/config/vary.ts';
import { configWith } from '../../src/gateway/load-config.ts';
import { configProblems } from '../helpers/config.ts';

describe('resources.<name>.vary and sharedAcrossIdentities', () => {
  test('a resource whose service forwards claims varies by them implicitly, and says so', () => {
    const config = configWith({ upstream: { forwardClaims: { 'X-Tenant': 'tenant' }, forwardAuthorization: true } });
    assert.deepEqual(
      implicitVaryNotes(config).map((n) => n.split(' (')[0] + ' (' + n.split(' (')[1]?.split(')')[0] + ')'),
      ['resources.customers is cached per identity (claim tenant, claim sub)', 'resources.orders is cached per identity (claim tenant, claim sub)'],
    );
  });

  test('a declared vary or sharedAcrossIdentities is not implicit; nothing forwarded, nothing varies', () => {
    assert.deepEqual(
      implicitVaryNotes(
        configWith({
          upstream: { forwardClaims: { 'X-Tenant': 'tenant' } },
          resources: { customers: { vary: { claims: ['tenant'] } }, orders: { sharedAcrossIdentities: true } },
        }),
      ),
      [],
    );
    assert.deepEqual(implicitVaryNotes(configWith({})), []);
  });

  test('vary and sharedAcrossIdentities together, or a header that is no header name, are refused', () => {
    assert.deepEqual(configProblems({ resources: { customers: { vary: { headers: ['Accept Language'] }, sharedAcrossIdentities: true } } }), [
      'resources.customers.sharedAcrossIdentities: not allowed together with resources.customers.vary (one says what the answer depends on, the other that it depends on nothing)',
      'resources.customers.vary.headers: "Accept Language" is not a header name',
    ]);
  });

  test('--check-config names each resource that varies implicitly', () => {
    const dir = mkdtempSync(join(tmpdir(), 'hypergate-vary-'));
    after(() => rmSync(dir, { recursive: true, force: true }));
    const file = join(dir, 'tenant.json');
    writeFileSync(
      file,
      JSON.stringify({
        upstream: { url: 'http://127.0.0.1:9', forwardClaims: { 'X-Tenant': 'tenant' } },
        auth: { secret: 'a-secret-of-at-least-thirty-two-bytes-long!', algorithms: ['HS256'] },
      }),
    );
    const run = spawnSync(process.execPath, ['--import', 'tsx', resolve(PROJECT_ROOT, 'src/main.ts'), '--check-config', '--config', file], {
      cwd: PROJECT_ROOT,
      encoding: 'utf8',
      timeout: 20_000,
    });
    assert.equal(run.status, 0, run.stderr);
    assert.match(run.stdout, /note: resources\.customers is cached per identity \(claim tenant\)/);
    assert.match(run.stdout, /note: resources\.orders is cached per identity \(claim tenant\)/);
  });
});

describe('forwardHeaders', () => {
  test('refuses hop-by-hop headers, credentials, Host and the headers the gateway builds', () => {
    const problems = configProblems({
      upstream: { forwardHeaders: ['Accept-Language', 'Connection', 'Authorization', 'Cookie', 'Host', 'X-Forwarded-For', 'X-Request-Id', 'bad header'] },
    });
    assert.deepEqual(problems, [
      'upstream.forwardHeaders: "Connection" is never passed on from the client',
      'upstream.forwardHeaders: "Authorization" is never passed on from the client (use forwardAuthorization)',
      'upstream.forwardHeaders: "Cookie" is never passed on from the client',
      'upstream.forwardHeaders: "Host" is never passed on from the client',
      'upstream.forwardHeaders: "X-Forwarded-For" is never passed on from the client',
      'upstream.forwardHeaders: "X-Request-Id" is never passed on from the client',
      'upstream.forwardHeaders: "bad header" is not an HTTP header name (RFC 9110 section 5.1)',
    ]);
  });

  test('makes the resources of the service vary by them implicitly', () => {
    assert.match(
      implicitVaryNotes(configWith({ upstream: { forwardHeaders: ['Accept-Language'] } }))[0] ?? '',
      /resources\.customers is cached per identity \(header Accept-Language\)/,
    );
  });
});

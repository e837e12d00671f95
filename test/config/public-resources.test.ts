import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { configProblems } from '../helpers/config.ts';

const publicCustomers = (extra: Record<string, unknown> = {}): unknown => ({ resources: { customers: { public: true, ...extra } } });

describe('resources.<name>.public in config', () => {
  test('is off by default, and a public resource with no owner rule in force is valid', () => {
    assert.deepEqual(configProblems({}), []);
    // The shipped owner rule takes its claim from auth.ownerClaim, which is null: no rule in force.
    assert.deepEqual(configProblems(publicCustomers()), []);
  });

  test('an owner rule in force stops the start: an anonymous caller owns nothing', () => {
    const problems = configProblems({ ...(publicCustomers() as object), auth: { ownerClaim: 'customer_id' } });
    assert.deepEqual(problems, [
      'resources.customers.public: an anonymous caller owns nothing, so the owner rule (claim "customer_id") would refuse every public read; set resources.customers.owner to null, or drop public',
    ]);
    assert.deepEqual(configProblems({ resources: { customers: { public: true, owner: null } }, auth: { ownerClaim: 'customer_id' } }), []);
  });

  test('a service told who asks stops the start: its answers would be shared with anonymous callers', () => {
    const claims = configProblems({ ...(publicCustomers() as object), upstream: { forwardClaims: { 'X-Subject': 'sub' } } });
    assert.deepEqual(claims, [
      'resources.customers.public: the service "upstream" is told who asks (upstream.forwardClaims), so one caller\'s answer would be shared with anonymous callers; serve it from a service without them, or drop public',
    ]);
    const both = configProblems({
      upstreams: { catalogue: { url: 'http://127.0.0.1:9', forwardAuthorization: true, forwardClaims: { 'X-Subject': 'sub' } } },
      resources: { customers: { public: true, service: 'catalogue' } },
    });
    assert.equal(both.length, 1);
    assert.match(both[0] as string, /\(upstreams\.catalogue\.forwardClaims, upstreams\.catalogue\.forwardAuthorization\)/);
  });

  test('a vary on claims stops the start: an anonymous caller has none; a vary on headers is valid', () => {
    const problems = configProblems(publicCustomers({ vary: { claims: ['tenant'] } }));
    assert.ok(
      problems.includes(
        'resources.customers.public: an anonymous caller has no claims, so resources.customers.vary.claims would keep nothing apart; vary by headers only, or drop public',
      ),
      problems.join('\n'),
    );
    assert.deepEqual(configProblems(publicCustomers({ vary: { headers: ['Accept-Language'] } })), []);
  });

  test('a public resource without GET stops the start', () => {
    const problems = configProblems({ resources: { customers: { public: true, methods: ['POST'] } } });
    assert.ok(
      problems.includes('resources.customers.public: lets only GET and HEAD through without credentials, and resources.customers.methods has no "GET"'),
      problems.join('\n'),
    );
  });

  test('a public value that is not a boolean is named', () => {
    const problems = configProblems({ resources: { customers: { public: 'yes' } } });
    assert.deepEqual(problems, ['resources.customers.public: expected true or false, got "yes"']);
  });
});

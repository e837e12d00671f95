import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { HgError } from '../../src/lib/errors.ts';
import { checkMediaType, isIdentityCoding } from '../../src/resources/write-checks.ts';

/** The 415 a check throws, with its header fields. */
function unsupported(run: () => unknown): HgError {
  try {
    run();
  } catch (err) {
    assert.ok(err instanceof HgError && err.code === 'HG_ERR_UNSUPPORTED_MEDIA_TYPE', String(err));
    return err;
  }
  assert.fail('expected a 415');
}

describe('the checks a write passes before its body is read', () => {
  it('takes no Content-Encoding, or a list of identity only, as no coding (RFC 9110 sections 8.4.1, 5.6.1.2)', () => {
    for (const value of [undefined, 'identity', 'IDENTITY', 'identity, identity', '', ' , identity'])
      assert.equal(isIdentityCoding(value), true, String(value));
    for (const value of ['gzip', 'identity, gzip', 'br', 'x-custom']) assert.equal(isIdentityCoding(value), false, value);
  });

  it("accepts each method's JSON media type with parameters and returns the Content-Type as sent", () => {
    assert.equal(checkMediaType('POST', { 'content-type': 'application/json; charset=utf-8' }), 'application/json; charset=utf-8');
    assert.equal(checkMediaType('PUT', { 'content-type': 'application/json' }), 'application/json');
    assert.equal(checkMediaType('PATCH', { 'content-type': 'application/merge-patch+json' }), 'application/merge-patch+json');
  });

  it('refuses another media type with 415 saying what the method takes (Accept-Post, Accept-Patch)', () => {
    const post = unsupported(() => checkMediaType('POST', { 'content-type': 'text/plain' }));
    assert.deepEqual(post.headers, { 'Accept-Post': 'application/json' });
    assert.equal(post.detail, 'POST takes application/json (UTF-8).');
    const patch = unsupported(() => checkMediaType('PATCH', { 'content-type': 'application/json' }));
    assert.deepEqual(patch.headers, { 'Accept-Patch': 'application/merge-patch+json' });
    assert.deepEqual(unsupported(() => checkMediaType('PUT', {})).headers, {});
  });

  it('refuses a body in a content coding with 415 and Accept-Encoding: identity (RFC 9110 section 15.5.16)', () => {
    const coded = unsupported(() => checkMediaType('PUT', { 'content-type': 'application/json', 'content-encoding': 'gzip' }));
    assert.deepEqual(coded.headers, { 'Accept-Encoding': 'identity' });
  });
});

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { createConfigLoader } from '../../src/config/load.ts';
import type { Config } from '../../src/config/types.ts';
import { ConfigError } from '../../src/config/validate.ts';
import { configWith } from '../../src/gateway/load-config.ts';

describe('checks passed to the config loader', () => {
  test('run on the validated config, and their problems are listed with the others', () => {
    const seen: Config[] = [];
    const loader = createConfigLoader([
      (config, problems) => {
        seen.push(config);
        if (config.server.port === 1234) problems.push('server.port: not 1234');
      },
    ]);
    assert.equal(loader.configWith({}).server.port, 8080);
    assert.equal(seen.length, 1);
    assert.throws(
      () => loader.configWith({ server: { port: 1234 }, cors: { origins: ['nope'] } }),
      (err: unknown) => {
        assert.ok(err instanceof ConfigError);
        assert.deepEqual(err.problems, ['server.port: not 1234', 'cors.origins: "nope" is not an origin (scheme://host[:port], no path), nor "*"']);
        return true;
      },
    );
  });

  test('do not run when a key already broke its own rule', () => {
    let runs = 0;
    const loader = createConfigLoader([() => void runs++]);
    assert.throws(() => loader.configWith({ server: { port: -1 } }), ConfigError);
    assert.equal(runs, 0);
  });

  test('the resource declarations are checked by the loader the gateway uses, not by config alone', () => {
    const bad = { resources: { products: { path: '/api/products/{sku', params: { sku: 'string' }, upstream: '/p/{sku}' } } };
    assert.throws(() => configWith(bad), ConfigError);
    assert.equal(createConfigLoader([]).configWith(bad).resources['products']?.path, '/api/products/{sku');
  });
});

// ESLint for the whole repository: typescript-eslint's type-aware rules, which catch what the
// compiler lets through (a promise nobody awaits, an `any` leaking out of parsed JSON, an
// assertion that no longer asserts anything). Prettier owns the layout: eslint-config-prettier
// turns off every rule that would argue with it.
import js from '@eslint/js';
import { defineConfig } from 'eslint/config';
import prettier from 'eslint-config-prettier/flat';
import tseslint from 'typescript-eslint';

export default defineConfig(
  { ignores: ['dist/', 'coverage/', 'bench/results/'] },
  js.configs.recommended,
  tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      // node:test's test() and describe() return promises the runner itself awaits.
      '@typescript-eslint/no-floating-promises': [
        'error',
        { allowForKnownSafeCalls: [{ from: 'package', package: 'node:test', name: ['test', 'describe', 'it', 'suite'] }] },
      ],
      // An async method that does not await still keeps its promise contract (a throw becomes a
      // rejection); interfaces with an in-memory and a Redis implementation rely on that.
      '@typescript-eslint/require-await': 'off',
      // Finding control characters is what the header, path and JSON checks are for.
      'no-control-regex': 'off',
      // A variable a closure reads before its one assignment (a timer set after its handler) stays `let`.
      'prefer-const': ['error', { ignoreReadBeforeAssign: true }],
      // `const { d: _d, ...publicJwk } = jwk` drops a key on purpose.
      '@typescript-eslint/no-unused-vars': ['error', { ignoreRestSiblings: true }],
      // prom-client calls collect() with the metric as `this`; the gateway's object is `self` there.
      '@typescript-eslint/no-this-alias': ['error', { allowedNames: ['self'] }],
    },
  },
  {
    files: ['**/*.js'],
    extends: [tseslint.configs.disableTypeChecked],
    languageOptions: { globals: { process: 'readonly', console: 'readonly' } },
  },
  prettier,
);

// Lint: typescript-eslint's type-checked rules over every TypeScript file the
// project runs (src, test, bench), and its non-type-checked rules over the
// plain CommonJS scripts in scripts/. Zero warnings allowed (npm run lint,
// part of npm test).
import tseslint from 'typescript-eslint';

export default tseslint.config(
  {
    ignores: [
      'nodes/**', 'node_modules/**', '.node-red-dev/**', 'test-results/**', 'bin/**', 'resources/**', 'docs/**',
    ],
  },
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: { project: ['./tsconfig.test.json'], tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      // The convention tsc's noUnusedLocals/noUnusedParameters already keep:
      // a leading underscore marks a name that is unused on purpose (a
      // callback's leading parameter, a property left out of a rest copy).
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrorsIgnorePattern: '^_', ignoreRestSiblings: true }],
    },
  },
  {
    // The plain CommonJS JavaScript the project runs (scripts/, the bench's
    // helper nodes, the mocha reporter): outside the TypeScript project, so
    // no type information, and require() is how they load modules.
    files: ['**/*.js'],
    extends: [tseslint.configs.disableTypeChecked],
    languageOptions: {
      sourceType: 'commonjs',
      globals: { require: 'readonly', module: 'writable', process: 'readonly', console: 'readonly', __dirname: 'readonly', setTimeout: 'readonly', clearTimeout: 'readonly' },
    },
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
);

// Lint: typescript-eslint's type-checked rules over every TypeScript file the
// project runs (src, test, bench), and its non-type-checked rules over the
// plain CommonJS scripts in scripts/ and over the editor's JavaScript (the
// files in resources/ and the inline scripts of the nodes' .html files,
// which run in the browser). Zero warnings allowed (npm run lint, part of
// npm test).
import { builtinRules } from 'eslint/use-at-your-own-risk';
import tseslint from 'typescript-eslint';

/**
 * The inline scripts of an editor file (`<script type="text/javascript">`
 * without a src) as one block of JavaScript: everything else is blanked to
 * spaces, line breaks kept, so that every message's line and column, and
 * every fix's range, are the .html file's own. The blocks run in one
 * global scope in the browser, as they are linted here.
 */
const inlineScripts = {
  meta: { name: 'inline-scripts', version: '1.0.0' },
  preprocess(text) {
    const blank = (part) => part.replace(/[^\n]/g, ' ');
    let code = '';
    let at = 0;
    for (const script of text.matchAll(/(<script\b[^>]*>)([\s\S]*?)<\/script>/g)) {
      const [whole, open, body] = script;
      const start = script.index + open.length;
      const javascript = /\btype="text\/javascript"/.test(open) && !/\bsrc=/.test(open);
      code += blank(text.slice(at, start)) + (javascript ? body : blank(body));
      at = start + body.length;
      void whole;
    }
    code += blank(text.slice(at));
    return [{ text: code, filename: 'inline.js' }];
  },
  postprocess: (messages) => messages.flat(),
  supportsAutofix: true,
};

/**
 * ESLint's own recommended rules (those @eslint/js's recommended config
 * turns on), read from the rules' metadata rather than added as a package;
 * no-unused-vars is typescript-eslint's, already on.
 */
const recommendedCoreRules = Object.fromEntries(
  [...builtinRules]
    .filter(([name, rule]) => rule.meta?.docs?.recommended === true && name !== 'no-unused-vars')
    .map(([name]) => [name, 'error']),
);

/** What the browser and Node-RED's editor give the editor's scripts. */
const editorGlobals = {
  window: 'readonly',
  self: 'readonly',
  document: 'readonly',
  console: 'readonly',
  setTimeout: 'readonly',
  clearTimeout: 'readonly',
  setInterval: 'readonly',
  clearInterval: 'readonly',
  Node: 'readonly',
  // Node-RED's editor API and its jQuery.
  RED: 'readonly',
  $: 'readonly',
  jQuery: 'readonly',
};

/** What the pack's own resources/*.js put on window, for the .html files that load them. */
const packGlobals = {
  TelemetryDedupEditor: 'readonly',
  TelemetryDedupSidebar: 'readonly',
};

export default tseslint.config(
  {
    // nodes/ holds tsc's output beside the editor files: only the editor
    // files (and the inline scripts read out of them) are the project's.
    ignores: [
      'nodes/**/*.js', '!nodes/*.html/*.js',
      'node_modules/**', '.node-red-dev/**', 'test-results/**', 'bin/**', 'docs/**',
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
    ignores: ['resources/**', 'nodes/**'],
    extends: [tseslint.configs.disableTypeChecked],
    languageOptions: {
      sourceType: 'commonjs',
      globals: { require: 'readonly', module: 'writable', process: 'readonly', console: 'readonly', __dirname: 'readonly', setTimeout: 'readonly', clearTimeout: 'readonly' },
    },
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
  {
    files: ['nodes/*.html'],
    processor: inlineScripts,
  },
  {
    // The editor's JavaScript: classic scripts in the browser, beside
    // Node-RED's editor, with nothing to import and nothing typed. Every
    // global it uses is named above, so no-undef catches a typo or a
    // forgotten `var`.
    files: ['resources/*.js', 'nodes/*.html/*.js'],
    extends: [tseslint.configs.disableTypeChecked],
    languageOptions: {
      sourceType: 'script',
      globals: editorGlobals,
    },
    rules: {
      ...recommendedCoreRules,
      // Node-RED's idiom in an edit dialog's callbacks (oneditprepare's
      // handlers, written as functions, each with a `this` of its own):
      // `var node = this`. Any other alias is still reported.
      '@typescript-eslint/no-this-alias': ['error', { allowedNames: ['node'] }],
    },
  },
  {
    files: ['nodes/*.html/*.js'],
    languageOptions: { globals: { ...editorGlobals, ...packGlobals } },
  },
);

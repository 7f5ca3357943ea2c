// npm run lint: eslint with typescript-eslint's type-aware rules over every TypeScript and
// JavaScript file we write (src, test, bench, scripts, examples, bin). Formatting is biome's job
// (biome.json), not eslint's. Import style needs no rule here: tsc's verbatimModuleSyntax already
// rejects a type imported without `import type`.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  {
    ignores: ['node_modules/', '.tools/', 'dist/', '.kplane/', '.tmp/', 'tmp/', 'docs/', 'bench/results/', '**/testdata/'],
  },
  {
    files: ['**/*.ts', '**/*.js', '**/*.mjs'],
    extends: [js.configs.recommended, ...tseslint.configs.recommendedTypeChecked],
    languageOptions: {
      parserOptions: {
        projectService: {
          // The few plain-JS files are outside tsconfig.json (it has no allowJs): each gets the
          // default project, which reads their JSDoc types.
          allowDefaultProject: ['eslint.config.js', '.dependency-cruiser.mjs', 'bin/*.js', 'scripts/*.mjs', 'src/runtime/*.mjs'],
        },
        tsconfigRootDir: import.meta.dirname,
      },
    },
    linterOptions: { reportUnusedDisableDirectives: 'error' },
    rules: {
      '@typescript-eslint/no-floating-promises': [
        'error',
        {
          // node:test runs what test()/describe()/it() return and reports their failures itself.
          allowForKnownSafeCalls: [
            { from: 'package', package: 'node:test', name: ['test', 'describe', 'it', 'suite', 'before', 'after', 'beforeEach', 'afterEach'] },
          ],
        },
      ],
      '@typescript-eslint/only-throw-error': [
        'error',
        {
          // Module-private control-flow signals, each caught by the module that throws it (no stack
          // trace to capture on a parser's hot path); none leaves its module.
          allow: [
            { from: 'file', name: 'HardError', path: 'src/apimachinery/gotypes.ts' },
            { from: 'file', name: 'ParseFailure', path: 'src/apimachinery/labels.ts' },
            { from: 'file', name: 'Refused', path: 'src/golang/json-scanner.ts' },
          ],
        },
      ],
      '@typescript-eslint/no-base-to-string': [
        'error',
        {
          // `{}` is `unknown` once null is ruled out: a field of decoded JSON or YAML, whose shape is
          // checked where it is decoded. Declared object types stay checked. (The first four are the
          // rule's defaults.)
          ignoredTypeNames: ['Error', 'RegExp', 'URL', 'URLSearchParams', '{}'],
        },
      ],
      // Rejecting with a caught value (typed unknown) passes an error on unchanged, as a rethrow does.
      '@typescript-eslint/prefer-promise-reject-errors': ['error', { allowThrowingUnknown: true }],
      // A `default:` is this code's deliberate "everything else" (unknown schemas kept, other tokens
      // refused); a switch without one must name every member of the union.
      '@typescript-eslint/switch-exhaustiveness-check': ['error', { considerDefaultExhaustiveForUnions: true }],
      // Off: an async function whose body never awaits is how this code implements a Promise-returning
      // interface (Storage, ImagePuller, health checks): a synchronous throw becomes a rejection.
      '@typescript-eslint/require-await': 'off',
      // Off: `this` is aliased here as a cursor walking a tree of `this`'s own class, or for functions
      // whose own `this` is another object (a result's getter, a property descriptor's methods).
      '@typescript-eslint/no-this-alias': 'off',
      // Off: this code writes Go's JSON and YAML escaping and matches terminal output: control
      // characters in a regular expression are what it means.
      'no-control-regex': 'off',
      // Off: tests match indented output, where literal spaces read as the indentation they match.
      'no-regex-spaces': 'off',
      // Off: tsc's noUnusedLocals and noUnusedParameters already check this, `_` prefix and all.
      '@typescript-eslint/no-unused-vars': 'off',
    },
  },
);

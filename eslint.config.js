import neostandard from 'neostandard'
import tseslint from 'typescript-eslint'

export default [
  // the client's generated types are openapi-typescript's output, checked by the drift test instead
  ...neostandard({ ts: true, ignores: ['dist/**', 'data/**', 'node_modules/**', 'clients/typescript/dist/**', 'clients/typescript/src/generated/**'] }),
  // rules that need the types: what a promise is, where one is dropped or handed where a callback belongs
  ...tseslint.configs.recommendedTypeCheckedOnly.map((config) => ({ ...config, files: ['**/*.ts'] })),
  {
    files: ['**/*.ts'],
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      // async here means "returns a promise", as the contract asks (Fastify's async plugins and hooks, the
      // PetStore interface implemented on SQLite's synchronous driver), whether or not the body awaits
      '@typescript-eslint/require-await': 'off',
      // node:test's test() and describe() return promises the runner itself awaits
      '@typescript-eslint/no-floating-promises': ['error', {
        allowForKnownSafeCalls: [{ from: 'package', package: 'node:test', name: ['test', 'describe', 'it', 'suite'] }]
      }]
    }
  },
  {
    // light-my-request's res.json() and JSON.parse are typed any; the tests assert the shapes they read
    files: ['test/**/*.ts'],
    rules: {
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off'
    }
  },
  {
    // the tools lean on tools/, never on the tests (the tests lean on tools/)
    files: ['bench/**', 'scripts/**', 'tools/**'],
    rules: {
      'no-restricted-imports': ['error', { patterns: [{ regex: '(^|/)test/', message: 'bench/, scripts/ and tools/ must not import from test/: share the code through tools/' }] }]
    }
  }
]

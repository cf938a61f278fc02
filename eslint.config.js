import neostandard from 'neostandard'

export default [
  // the client's generated types are openapi-typescript's output, checked by the drift test instead
  ...neostandard({ ts: true, ignores: ['dist/**', 'data/**', 'node_modules/**', 'clients/typescript/dist/**', 'clients/typescript/src/generated/**'] }),
  {
    // the tools lean on tools/, never on the tests (the tests lean on tools/)
    files: ['bench/**', 'scripts/**', 'tools/**'],
    rules: {
      'no-restricted-imports': ['error', { patterns: [{ regex: '(^|/)test/', message: 'bench/, scripts/ and tools/ must not import from test/: share the code through tools/' }] }]
    }
  }
]

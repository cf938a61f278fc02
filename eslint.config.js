import neostandard from 'neostandard'

export default [
  // the client's generated types are openapi-typescript's output, checked by the drift test instead
  ...neostandard({ ts: true, ignores: ['dist/**', 'data/**', 'node_modules/**', 'clients/typescript/dist/**', 'clients/typescript/src/generated/**'] })
]

#!/usr/bin/env node
// `prepare` and `prestart`: build with the TypeScript compiler when it is installed (a development
// checkout), and do nothing when it is not: `npm ci --omit=dev` installs no compiler, and a production
// install or release runs the build it was given (`npm run release`, docs/operations.md).
// `--service` builds the service alone (what `npm start` needs); without it the client workspace too.
import { execSync } from 'node:child_process'
import { createRequire } from 'node:module'

const require = createRequire(import.meta.url)
let compiler
try {
  compiler = require.resolve('typescript')
} catch {
  console.log('petstore: TypeScript is not installed (a production install, npm ci --omit=dev): nothing built; run a release (npm run release) or dist/ as built')
  process.exit(0)
}
if (compiler !== undefined) {
  execSync('npm run build', { stdio: 'inherit' })
  if (!process.argv.includes('--service')) execSync('npm run build:client', { stdio: 'inherit' })
}

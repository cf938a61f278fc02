#!/usr/bin/env node
// `prepare` and `prestart`: build with the TypeScript compiler when it is installed (a development
// checkout), and do nothing when it is not: `npm ci --omit=dev` installs no compiler, and a production
// install or release runs the build it was given (`npm run release`, docs/operations.md).
// `--service` (`npm start`) builds the service alone, and only when dist/ is older than what it is built
// from (scripts/stale-build.js): a start with dist/ current builds nothing. Without it (`npm install`'s
// `prepare`), the service and the client workspace, always.
import { execSync } from 'node:child_process'
import { createRequire } from 'node:module'
import { dirname } from 'node:path'
import { fileURLToPath } from 'node:url'
import { staleBuildFiles } from './stale-build.js'

const require = createRequire(import.meta.url)
let compiler
try {
  compiler = require.resolve('typescript')
} catch {
  console.log('petstore: TypeScript is not installed (a production install, npm ci --omit=dev): nothing built; run a release (npm run release) or dist/ as built')
  process.exit(0)
}
const service = process.argv.includes('--service')
if (compiler !== undefined) {
  const stale = service ? staleBuildFiles(dirname(dirname(fileURLToPath(import.meta.url)))) : undefined
  if (stale?.length === 0) {
    console.log('petstore: dist/ is newer than src/ and the build\'s inputs: not rebuilt')
  } else {
    if (stale !== undefined) console.log(`petstore: dist/ is older than ${stale.slice(0, 3).join(', ')}${stale.length > 3 ? ` and ${stale.length - 3} more` : ''}: npm run build`)
    execSync('npm run build', { stdio: 'inherit' })
    if (!service) execSync('npm run build:client', { stdio: 'inherit' })
  }
}

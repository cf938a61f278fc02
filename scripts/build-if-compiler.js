#!/usr/bin/env node
// `prepare` and `prestart`: build with the TypeScript compiler when it is installed (a development
// checkout), and do nothing when it is not: `npm ci --omit=dev` installs no compiler, and a production
// install or release runs the build it was given (`npm run release`, docs/operations.md).
// Each build runs only when its output is older than what it is built from (scripts/stale-build.js):
// `--service` (`npm start`) builds the service alone; without it (`npm install`'s `prepare`, and the one
// npx runs when it installs this project into its cache for `npx petstore`), the service and the client
// workspace. So the first `npx petstore` after `npm install` builds nothing.
import { execSync } from 'node:child_process'
import { createRequire } from 'node:module'
import { dirname } from 'node:path'
import { fileURLToPath } from 'node:url'
import { staleBuildFiles, staleClientBuildFiles } from './stale-build.js'

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
  const root = dirname(dirname(fileURLToPath(import.meta.url)))
  buildIfStale('dist/ is newer than src/ and the build\'s inputs', 'dist/', staleBuildFiles(root), 'npm run build')
  if (!service) buildIfStale('clients/typescript/dist/ is newer than its src/ and its build\'s inputs', 'clients/typescript/dist/', staleClientBuildFiles(root), 'npm run build:client')
}

function buildIfStale (current, output, stale, command) {
  if (stale.length === 0) {
    console.log(`petstore: ${current}: not rebuilt`)
    return
  }
  console.log(`petstore: ${output} is older than ${stale.slice(0, 3).join(', ')}${stale.length > 3 ? ` and ${stale.length - 3} more` : ''}: ${command}`)
  execSync(command, { stdio: 'inherit' })
}

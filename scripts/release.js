#!/usr/bin/env node
// `npm run release -- <dir>`: builds the service and writes a self-contained release to <dir> (the
// Dockerfile's build stage runs exactly this): dist/, migrations/, package.json (its scripts cut to
// `start`), package-lock.json, and node_modules as `npm ci --omit=dev` installs it from the lockfile.
// Nothing in it compiles or needs a dev dependency: start it with `node dist/bin/server.js` (or
// `npm start`), run the CLI with `node dist/bin/cli.js`. Run it from a development checkout
// (`npm ci` first: the build needs TypeScript). See docs/operations.md#the-release-directory.
import { execFileSync } from 'node:child_process'
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'

const root = dirname(dirname(fileURLToPath(import.meta.url)))
// the Node-API level better-sqlite3 13 needs (src/store/sqlite/driver.ts); below it the optional 12.x build is used
const BETTER_SQLITE3_NAPI_VERSION = 10

const [target, ...extra] = process.argv.slice(2)
if (target === undefined || extra.length > 0) {
  console.error('usage: npm run release -- <dir>   (a new or empty directory)')
  process.exit(2)
}
const dir = resolve(target)
if (existsSync(dir) && readdirSync(dir).length > 0) {
  console.error(`release: ${dir} is not empty; give a new or empty directory`)
  process.exit(2)
}

const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm'
const run = (command, args, cwd) => { execFileSync(command, args, { cwd, stdio: 'inherit' }) }

run(npm, ['run', 'build'], root)
mkdirSync(dir, { recursive: true })
cpSync(join(root, 'dist'), join(dir, 'dist'), { recursive: true })
cpSync(join(root, 'migrations'), join(dir, 'migrations'), { recursive: true })
cpSync(join(root, 'package-lock.json'), join(dir, 'package-lock.json'))
const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'))
// the development scripts (build, prepare, tests) need the source and the compiler, which a release has not
manifest.scripts = { start: 'node dist/bin/server.js' }
writeFileSync(join(dir, 'package.json'), `${JSON.stringify(manifest, null, 2)}\n`)
// npm ci checks every workspace of the lockfile against its manifest; the client itself is not shipped
for (const workspace of manifest.workspaces ?? []) {
  mkdirSync(join(dir, workspace), { recursive: true })
  cpSync(join(root, workspace, 'package.json'), join(dir, workspace, 'package.json'))
}

// on a Node with Node-API 10 (22.14+, 24) the optional better-sqlite3 12.x for Node 20 is never loaded,
// and without internet its install would compile it from source
const omit = ['--omit=dev', ...(Number(process.versions.napi) >= BETTER_SQLITE3_NAPI_VERSION ? ['--omit=optional'] : [])]
run(npm, ['ci', ...omit, '--no-audit', '--no-fund'], dir)

for (const workspace of manifest.workspaces ?? []) {
  rmSync(join(dir, workspace.split('/')[0]), { recursive: true, force: true })
  const name = JSON.parse(readFileSync(join(root, workspace, 'package.json'), 'utf8')).name
  rmSync(join(dir, 'node_modules', name), { recursive: true, force: true })
  const scope = join(dir, 'node_modules', dirname(name))
  if (name.startsWith('@') && existsSync(scope) && readdirSync(scope).length === 0) rmSync(scope, { recursive: true })
}
console.log(`release: ${dir} (start: node dist/bin/server.js; CLI: node dist/bin/cli.js)`)

import assert from 'node:assert/strict'
import { execFile, spawn } from 'node:child_process'
import { cp, mkdir } from 'node:fs/promises'
import { existsSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { promisify } from 'node:util'
import { test, type TestContext } from 'node:test'
import { PROJECT_ROOT, within } from '../helpers/processes.js'
import { tempDir } from '../helpers/temp-dir.js'

const run = promisify(execFile)

/** A fresh clone of the working tree: its tracked files and new ones not ignored, as they are now (committed or not). */
async function cloneWorkingTree (t: TestContext): Promise<string> {
  const clone = await tempDir(t)
  const { stdout } = await run('git', ['ls-files', '--cached', '--others', '--exclude-standard', '-z'], { cwd: PROJECT_ROOT, maxBuffer: 64 * 1024 * 1024 })
  for (const file of stdout.split('\0').filter((path) => path !== '' && existsSync(join(PROJECT_ROOT, path)))) {
    await mkdir(join(clone, dirname(file)), { recursive: true })
    await cp(join(PROJECT_ROOT, file), join(clone, file))
  }
  return clone
}

/** Runs npm with `args` in `cwd` to completion; its exit code and everything it printed. */
async function npm (cwd: string, args: string[]): Promise<{ code: unknown, output: string }> {
  const install = spawn('npm', args, { cwd, stdio: ['ignore', 'pipe', 'pipe'] })
  let output = ''
  install.stdout.setEncoding('utf8').on('data', (chunk: string) => { output += chunk })
  install.stderr.setEncoding('utf8').on('data', (chunk: string) => { output += chunk })
  const code = await within(14 * 60_000, `npm ${args.join(' ')} did not finish`, new Promise((resolve) => install.once('close', resolve)))
  return { code, output }
}

test('When a fresh clone of the working tree is installed with npm ci --omit=dev, then it exits 0 without a compiler', { timeout: 15 * 60_000 }, async (t) => {
  const clone = await cloneWorkingTree(t)

  const { code, output } = await npm(clone, ['ci', '--omit=dev', '--no-audit', '--no-fund'])

  assert.equal(code, 0, output)
  assert.match(output, /TypeScript is not installed .*nothing built/)
  assert.ok(!existsSync(join(clone, 'node_modules', 'typescript')), 'a dev dependency was installed')
  assert.ok(existsSync(join(clone, 'node_modules', 'fastify')))
})

test('When a fresh clone is installed with npm install, as the README says, then its tree stays clean: package-lock.json is not rewritten', { timeout: 15 * 60_000 }, async (t) => {
  const clone = await cloneWorkingTree(t)
  const git = async (...args: string[]): Promise<string> => (await run('git', ['-c', 'user.name=test', '-c', 'user.email=test@example.invalid', ...args], { cwd: clone })).stdout
  await git('init', '-q')
  await git('add', '-A')
  await git('commit', '-q', '-m', 'clone')

  // npm writes the lockfile from the packages' manifests, before any install script runs; the scripts
  // (better-sqlite3's compile, `prepare`'s build into the ignored dist/) would add minutes and no file git tracks
  const { code, output } = await npm(clone, ['install', '--ignore-scripts', '--no-audit', '--no-fund'])

  assert.equal(code, 0, output)
  assert.equal(await git('status', '--porcelain'), '', `npm install changed the clone:\n${await git('diff')}`)
})

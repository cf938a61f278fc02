import assert from 'node:assert/strict'
import { execFile, spawn } from 'node:child_process'
import { cp, mkdir, readFile } from 'node:fs/promises'
import { existsSync } from 'node:fs'
import { basename, dirname, join } from 'node:path'
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

/** Runs `command` with `args` in `cwd` to completion; its exit code and everything it printed. */
async function runToEnd (cwd: string, command: string, args: string[]): Promise<{ code: unknown, output: string }> {
  const child = spawn(command, args, { cwd, stdio: ['ignore', 'pipe', 'pipe'] })
  let output = ''
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => { output += chunk })
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => { output += chunk })
  const code = await within(14 * 60_000, `${command} ${args.join(' ')} did not finish`, new Promise((resolve) => child.once('close', resolve)))
  return { code, output }
}

async function npm (cwd: string, args: string[]): Promise<{ code: unknown, output: string }> {
  return runToEnd(cwd, 'npm', args)
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

/** The Dockerfile's instructions, a continued line joined, comments left out. */
async function dockerfileInstructions (): Promise<string[]> {
  const text = (await readFile(join(PROJECT_ROOT, 'Dockerfile'), 'utf8')).replace(/\\\n\s*/g, ' ')
  return text.split('\n').map((line) => line.trim()).filter((line) => line !== '' && !line.startsWith('#'))
}

test('When the Dockerfile\'s dependency layer is replayed on the files it copies, then npm ci installs a working SQLite driver and builds nothing', { timeout: 15 * 60_000 }, async (t) => {
  const clone = await cloneWorkingTree(t)
  const workdir = await tempDir(t)
  const instructions = await dockerfileInstructions()
  const layer = instructions.slice(instructions.findIndex((line) => line.startsWith('WORKDIR ')) + 1, instructions.indexOf('COPY . .'))
  assert.ok(layer.some((line) => line.startsWith('COPY ')) && layer.some((line) => /^RUN npm ci\b/.test(line)), `no manifests-then-npm-ci layer before COPY . .:\n${layer.join('\n')}`)

  // the image's own steps, in order, in a directory that holds only what they copied (the packages
  // they need from the system, Python, make and g++, are the build stage's apt-get, already here)
  for (const line of layer) {
    const [instruction = '', ...args] = line.split(/\s+/)
    if (instruction === 'COPY') {
      // COPY <source>… <destination>: into a destination ending in / (or .), by the source's name
      const destination = args.at(-1)!
      for (const source of args.slice(0, -1)) {
        const into = /\/$|^\.$/.test(destination) ? join(workdir, destination, basename(source)) : join(workdir, destination)
        await mkdir(dirname(into), { recursive: true })
        await cp(join(clone, source), into, { recursive: true })
      }
    } else if (instruction === 'RUN') {
      const { code, output } = await runToEnd(workdir, 'sh', ['-c', line.slice('RUN '.length)])
      assert.equal(code, 0, `${line}\n${output}`)
    } else {
      assert.fail(`an instruction the replay does not know: ${line}`)
    }
  }

  assert.ok(!existsSync(join(workdir, 'dist')), 'the dependency layer built the project (its prepare ran)')
  const { stdout } = await run(process.execPath, ['-e', "const D = require(Number(process.versions.napi) >= 10 ? 'better-sqlite3' : 'better-sqlite3-node20'); console.log(new D(':memory:').prepare('select 1 as one').get().one)"], { cwd: workdir })
  assert.equal(stdout.trim(), '1')
})

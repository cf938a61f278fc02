import assert from 'node:assert/strict'
import { cp, mkdir, readFile } from 'node:fs/promises'
import { existsSync } from 'node:fs'
import { basename, dirname, join } from 'node:path'
import { test } from 'node:test'
import { cloneWorkingTree, run, runToEnd } from '../helpers/install.js'
import { PROJECT_ROOT } from '../helpers/processes.js'
import { tempDir } from '../helpers/temp-dir.js'

/** The Dockerfile's instructions, a continued line joined, comments left out. */
async function dockerfileInstructions (): Promise<string[]> {
  const text = (await readFile(join(PROJECT_ROOT, 'Dockerfile'), 'utf8')).replace(/\\\n\s*/g, ' ')
  return text.split('\n').map((line) => line.trim()).filter((line) => line !== '' && !line.startsWith('#'))
}

/** The Node major the image runs: the default NODE_IMAGE's tag (node:24.21.0-…). */
async function imageNodeMajor (): Promise<number> {
  const tag = /^ARG NODE_IMAGE=node:(\d+)\./m.exec(await readFile(join(PROJECT_ROOT, 'Dockerfile'), 'utf8'))?.[1]
  assert.ok(tag !== undefined, 'the Dockerfile has no ARG NODE_IMAGE=node:<major>.… default')
  return Number(tag)
}

test('When the Dockerfile\'s dependency layer is replayed on the files it copies, then npm ci installs a working SQLite driver and builds nothing', { timeout: 15 * 60_000 }, async (t) => {
  // the layer runs on the image's Node: replayed on another, it would install (and compile) a driver the
  // image never has, so CI proves it in its run on that Node (scripts/test-on-node.sh 24) and only there
  const major = await imageNodeMajor()
  if (Number(process.versions.node.split('.')[0]) !== major) {
    t.skip(`the image runs Node ${major}, this is Node ${process.versions.node}: replayed in the suites' run on Node ${major}`)
    return
  }
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

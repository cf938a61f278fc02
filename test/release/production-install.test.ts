import assert from 'node:assert/strict'
import { execFile, spawn } from 'node:child_process'
import { cp, mkdir } from 'node:fs/promises'
import { existsSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { promisify } from 'node:util'
import { test } from 'node:test'
import { PROJECT_ROOT, within } from '../helpers/processes.js'
import { tempDir } from '../helpers/temp-dir.js'

test('When a fresh clone of the working tree is installed with npm ci --omit=dev, then it exits 0 without a compiler', { timeout: 15 * 60_000 }, async (t) => {
  const clone = await tempDir(t)
  // the files a clone would hold: tracked ones and new ones not ignored, as they are in the working tree
  const { stdout } = await promisify(execFile)('git', ['ls-files', '--cached', '--others', '--exclude-standard', '-z'], { cwd: PROJECT_ROOT, maxBuffer: 64 * 1024 * 1024 })
  for (const file of stdout.split('\0').filter((path) => path !== '' && existsSync(join(PROJECT_ROOT, path)))) {
    await mkdir(join(clone, dirname(file)), { recursive: true })
    await cp(join(PROJECT_ROOT, file), join(clone, file))
  }

  const install = spawn('npm', ['ci', '--omit=dev', '--no-audit', '--no-fund'], { cwd: clone, stdio: ['ignore', 'pipe', 'pipe'] })
  let output = ''
  install.stdout.setEncoding('utf8').on('data', (chunk: string) => { output += chunk })
  install.stderr.setEncoding('utf8').on('data', (chunk: string) => { output += chunk })
  const code = await within(14 * 60_000, 'npm ci --omit=dev did not finish', new Promise((resolve) => install.once('close', resolve)))

  assert.equal(code, 0, output)
  assert.match(output, /TypeScript is not installed .*nothing built/)
  assert.ok(!existsSync(join(clone, 'node_modules', 'typescript')), 'a dev dependency was installed')
  assert.ok(existsSync(join(clone, 'node_modules', 'fastify')))
})

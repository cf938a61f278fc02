import assert from 'node:assert/strict'
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'node:test'
import { cloneWorkingTree, npm } from '../helpers/install.js'

test('When a fresh clone of the working tree is installed with npm ci --omit=dev, then it exits 0 without a compiler', { timeout: 15 * 60_000 }, async (t) => {
  const clone = await cloneWorkingTree(t)

  const { code, output } = await npm(clone, ['ci', '--omit=dev', '--no-audit', '--no-fund'])

  assert.equal(code, 0, output)
  assert.match(output, /TypeScript is not installed .*nothing built/)
  assert.ok(!existsSync(join(clone, 'node_modules', 'typescript')), 'a dev dependency was installed')
  assert.ok(existsSync(join(clone, 'node_modules', 'fastify')))
})

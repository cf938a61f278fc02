import assert from 'node:assert/strict'
import { test } from 'node:test'
import { cloneWorkingTree, npm, run } from '../helpers/install.js'

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

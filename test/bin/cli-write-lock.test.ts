import assert from 'node:assert/strict'
import { test } from 'node:test'
import { freshDatabaseUrl } from '../helpers/databases.js'
import { childEnv, runCli } from '../helpers/processes.js'
import { Database } from '../../src/infra/database/sqlite/driver.js'

// SQLite has one write lock for all the processes on a file. A command that only reads must not queue for it: while it
// waited, an instance's own writes would fail after their busy timeout (250 ms), and the command would hang as long as
// another process's transaction lasts
const HOLD_MS = 8_000

test('When another process holds a migrated SQLite file\'s write lock, then `petstore keys list` still answers at once, without waiting for the lock', async (t) => {
  const databaseUrl = await freshDatabaseUrl(t, 'sqlite')
  const env = childEnv({ DATABASE_URL: databaseUrl, LOG_LEVEL: 'silent' })
  const created = await runCli(['keys', 'create', '--name', 'storefront', '--role', 'read'], env)
  assert.equal(created.code, 0, created.stderr)
  const writer = new Database(databaseUrl.slice('sqlite:'.length), { fileMustExist: true })
  writer.exec('BEGIN IMMEDIATE')
  let held = true
  const release = setTimeout(() => { held = false; writer.exec('ROLLBACK') }, HOLD_MS)
  t.after(() => { clearTimeout(release); if (held) writer.exec('ROLLBACK'); writer.close() })

  const started = Date.now()
  const listed = await runCli(['keys', 'list', '--json'], env)
  const tookMs = Date.now() - started
  const stillHeld = held

  assert.equal(listed.code, 0, listed.stderr)
  assert.deepEqual(JSON.parse(listed.stdout).keys.map((key: { name: string }) => key.name), ['storefront'])
  assert.ok(stillHeld, `the command answered only after the lock was let go (${tookMs} ms)`)
  t.diagnostic(`answered in ${tookMs} ms with the write lock held`)
})

import assert from 'node:assert/strict'
import { createHash } from 'node:crypto'
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { describe, test, type TestContext } from 'node:test'
import { buildTestApp, tempDir, testStores, type StoreKind } from './helpers/build-app.js'
import { freshDatabaseUrl, readAllCells } from './helpers/databases.js'
import { childEnv, runCli, type CliResult } from './helpers/processes.js'

const KEY = /petstore_[A-Za-z0-9_-]{43}/g

interface Cli {
  databaseUrl: string
  run (...args: string[]): Promise<CliResult>
}

/** The CLI pointed at a fresh store. */
async function cliOnFreshDatabase (t: TestContext, store: StoreKind): Promise<Cli> {
  return cliOn(await freshDatabaseUrl(t, store))
}

function cliOn (databaseUrl: string): Cli {
  const env = childEnv({ DATABASE_URL: databaseUrl, LOG_LEVEL: 'silent' })
  return { databaseUrl, run: (...args) => runCli(args, env) }
}

/** Runs `keys create --name <name>` and returns the key and id it printed. */
async function createKey (cli: Cli, name: string): Promise<{ key: string, id: number }> {
  const created = await cli.run('keys', 'create', '--name', name)
  assert.equal(created.code, 0, created.stderr)
  const key = created.stdout.match(KEY)?.[0]
  const id = /API key (\d+)/.exec(created.stdout)?.[1]
  assert.ok(key !== undefined && id !== undefined, `no key or id in:\n${created.stdout}`)
  return { key, id: Number(id) }
}

function sha256Hex (text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex')
}

function bearer (key: string): { authorization: string } {
  return { authorization: `Bearer ${key}` }
}

for (const store of testStores()) {
  describe(`operator CLI (${store})`, () => {
    describe('keys create', () => {
      test('When a key is created with a name, then the CLI exits 0 and prints the new key exactly once', async (t) => {
        const cli = await cliOnFreshDatabase(t, store)

        const result = await cli.run('keys', 'create', '--name', 'ci')

        assert.equal(result.code, 0, result.stderr)
        const keys = result.stdout.match(KEY) ?? []
        assert.equal(keys.length, 1, `expected one key in:\n${result.stdout}`)
        assert.match(result.stdout, /\(ci\)/)
        assert.equal(result.stderr, '')
      })

      test('When a key was created by the CLI, then it authenticates HTTP requests against the same database', async (t) => {
        const cli = await cliOnFreshDatabase(t, store)
        const { key } = await createKey(cli, 'ci')
        const { app } = await buildTestApp(t, { databaseUrl: cli.databaseUrl, withKey: false })

        const res = await app.inject({ method: 'GET', url: '/v1/pets', headers: bearer(key) })

        assert.equal(res.statusCode, 200)
        assert.deepEqual(res.json(), [])
      })

      test('When a key is created, then the database holds only its SHA-256 hex, never the key itself', async (t) => {
        const cli = await cliOnFreshDatabase(t, store)
        const { key } = await createKey(cli, 'ci')

        const cells = await readAllCells(cli.databaseUrl)

        assert.deepEqual(cells.filter(({ table, column }) => table === 'api_keys' && column === 'key_hash').map(({ value }) => value), [sha256Hex(key)])
        assert.deepEqual(cells.filter(({ value }) => value.includes(key) || value.includes(key.slice('petstore_'.length))), [])
      })

      test('When keys create has no --name, then it exits 2 and prints the usage', async (t) => {
        const cli = await cliOnFreshDatabase(t, store)

        const result = await cli.run('keys', 'create')

        assert.equal(result.code, 2)
        assert.match(result.stderr, /--name/)
        assert.match(result.stderr, /Usage: petstore/)
        assert.doesNotMatch(result.stdout + result.stderr, KEY)
      })
    })

    describe('keys list', () => {
      test('When keys exist, then keys list shows id, name, created, last used and revoked, and never a key or its hash', async (t) => {
        const cli = await cliOnFreshDatabase(t, store)
        const used = await createKey(cli, 'ci')
        const unused = await createKey(cli, 'backup')
        const { app } = await buildTestApp(t, { databaseUrl: cli.databaseUrl, withKey: false })
        assert.equal((await app.inject({ method: 'GET', url: '/v1/pets', headers: bearer(used.key) })).statusCode, 200)

        const result = await cli.run('keys', 'list')

        assert.equal(result.code, 0, result.stderr)
        const [header, ...rows] = result.stdout.trimEnd().split('\n').map((line) => line.split(/ {2,}/))
        assert.deepEqual(header, ['ID', 'NAME', 'CREATED', 'LAST USED', 'REVOKED'])
        const iso = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/
        assert.equal(rows.length, 2)
        const [usedRow, unusedRow] = rows
        assert.equal(usedRow?.[0], String(used.id))
        assert.equal(usedRow?.[1], 'ci')
        assert.match(usedRow?.[2] ?? '', iso)
        assert.match(usedRow?.[3] ?? '', iso, 'the key used over HTTP shows when it was last used')
        assert.equal(usedRow?.[4], '-')
        assert.deepEqual(unusedRow?.slice(0, 2), [String(unused.id), 'backup'])
        assert.deepEqual(unusedRow?.slice(3), ['-', '-'])
        for (const { key } of [used, unused]) {
          assert.ok(!result.stdout.includes(key), 'keys list printed a key')
          assert.ok(!result.stdout.includes(sha256Hex(key)), 'keys list printed a key hash')
        }
        assert.doesNotMatch(result.stdout, KEY)
      })
    })

    describe('keys revoke', () => {
      test('When a key is revoked and key look-ups are not cached, then a running app rejects it on the very next request', async (t) => {
        const cli = await cliOnFreshDatabase(t, store)
        const { key, id } = await createKey(cli, 'ci')
        // the multi-instance test covers the default cache on PostgreSQL
        const { app } = await buildTestApp(t, { databaseUrl: cli.databaseUrl, withKey: false, env: { API_KEY_CACHE_SECONDS: '0' } })
        const before = await app.inject({ method: 'GET', url: '/v1/pets', headers: bearer(key) })
        assert.equal(before.statusCode, 200)

        const result = await cli.run('keys', 'revoke', String(id))
        const after = await app.inject({ method: 'GET', url: '/v1/pets', headers: bearer(key) })

        assert.equal(result.code, 0, result.stderr)
        assert.match(result.stdout, new RegExp(`Revoked API key ${id}\\b`))
        assert.equal(after.statusCode, 401)
        assert.equal(after.json().code, 'unauthorized')
        const listed = await cli.run('keys', 'list')
        assert.match(listed.stdout.split('\n')[1] ?? '', /Z$/, 'keys list shows when the key was revoked')
      })

      test('When the id names no key, then keys revoke exits 1 with a message naming the id', async (t) => {
        const cli = await cliOnFreshDatabase(t, store)
        await createKey(cli, 'ci')

        for (const id of ['999', '99999999999999999999']) {
          const result = await cli.run('keys', 'revoke', id)

          assert.equal(result.code, 1)
          assert.equal(result.stdout, '')
          assert.equal(result.stderr, `petstore: no active key has id ${id}\n`)
        }
      })
    })

    describe('migrate', () => {
      test('When migrate runs twice, then both exit 0, the first names the schema version and the second says it is already there', async (t) => {
        const cli = await cliOnFreshDatabase(t, store)

        const first = await cli.run('migrate')
        const second = await cli.run('migrate')

        assert.equal(first.code, 0, first.stderr)
        const version = /schema now at version (\d+)/.exec(first.stdout)?.[1]
        assert.ok(version !== undefined, `no version in:\n${first.stdout}`)
        assert.equal(second.code, 0, second.stderr)
        assert.match(second.stdout, new RegExp(`already at version ${version}\\b`))
      })
    })
  })
}

describe('operator CLI: usage and configuration errors', () => {
  /** The CLI on a SQLite file that does not exist yet, so that a test can see it was not created. */
  async function cliOnMissingFile (t: TestContext): Promise<Cli & { databasePath: string }> {
    const databasePath = join(await tempDir(t), 'petstore.db')
    return { ...cliOn(`sqlite:${databasePath}`), databasePath }
  }

  test('When no command is given, then the CLI exits 2 and prints the usage', async (t) => {
    const cli = await cliOnMissingFile(t)

    const result = await cli.run()

    assert.equal(result.code, 2)
    assert.match(result.stdout + result.stderr, /Usage: petstore <command>/)
    assert.equal(existsSync(cli.databasePath), false, 'a usage error must not create a database')
  })

  test('When the command is unknown, then the CLI exits 2, names it and prints the usage', async (t) => {
    const cli = await cliOnMissingFile(t)

    const result = await cli.run('frobnicate')

    assert.equal(result.code, 2)
    assert.match(result.stderr, /unknown command "frobnicate"/)
    assert.match(result.stderr, /Usage: petstore <command>/)
    assert.equal(existsSync(cli.databasePath), false, 'a usage error must not create a database')
  })

  test('When DATABASE_URL is not a supported URL, then the CLI exits 1 with one line naming DATABASE_URL', async () => {
    const env = childEnv({ DATABASE_URL: 'mysql://x', LOG_LEVEL: 'silent' })

    const result = await runCli(['keys', 'list'], env)

    assert.equal(result.code, 1)
    assert.equal(result.stdout, '')
    const lines = result.stderr.trimEnd().split('\n')
    assert.equal(lines.length, 1, `expected one line, got:\n${result.stderr}`)
    assert.match(lines[0] ?? '', /DATABASE_URL/)
  })
})

import assert from 'node:assert/strict'
import { createHash } from 'node:crypto'
import { execFile } from 'node:child_process'
import { existsSync } from 'node:fs'
import { mkdir, stat } from 'node:fs/promises'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { describe, test, type TestContext } from 'node:test'
import { addAdminOnlyRoutes, ADMIN_ONLY_PATH } from '../helpers/admin-only-route.js'
import { assertError } from '../helpers/assertions.js'
import { buildTestApp, tempDir, testStores, type StoreKind } from '../helpers/build-app.js'
import { freshDatabaseUrl, readAllCells } from '../helpers/databases.js'
import { childEnv, copyInstallation, PROJECT_ROOT, runCli, serverProcesses, type CliResult } from '../helpers/processes.js'
import { loadConfig } from '../../src/infra/config/config.js'
import { describeDatabase } from '../../src/infra/database/open-database.js'

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

/** Runs `keys create --name <name> [--role <role>]` and returns the key and id it printed. */
async function createKey (cli: Cli, name: string, role?: string): Promise<{ key: string, id: number }> {
  const created = await cli.run('keys', 'create', '--name', name, ...(role === undefined ? [] : ['--role', role]))
  assert.equal(created.code, 0, created.stderr)
  const key = created.stdout.match(KEY)?.[0]
  const id = /API key (\d+)/.exec(created.stdout)?.[1]
  assert.ok(key !== undefined && id !== undefined, `no key or id in:\n${created.stdout}`)
  return { key, id: Number(id) }
}

function sha256Hex (text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex')
}

/** The database as the CLI names it: the URL without password or parameters. */
function describeUrl (databaseUrl: string): string {
  return describeDatabase(loadConfig({ DATABASE_URL: databaseUrl }).database)
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
        assert.match(result.stdout, /\(ci, role write\)/)
        assert.ok(result.stdout.includes(` in ${describeUrl(cli.databaseUrl)}`), `the output names the database:\n${result.stdout}`)
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

      test('When a key is created with --role read, then over HTTP it may list pets but creating one is 403 insufficient_scope', async (t) => {
        const cli = await cliOnFreshDatabase(t, store)
        const { key } = await createKey(cli, 'storefront', 'read')
        const { app } = await buildTestApp(t, { databaseUrl: cli.databaseUrl, withKey: false })

        const list = await app.inject({ method: 'GET', url: '/v1/pets', headers: bearer(key) })
        const create = await app.inject({ method: 'POST', url: '/v1/pets', headers: { ...bearer(key), 'content-type': 'application/json' }, payload: JSON.stringify({ name: 'Rex', categoryId: 1 }) })

        assert.equal(list.statusCode, 200)
        assertError(create, 'insufficient_scope')
        assert.equal(create.headers['www-authenticate'], 'Bearer realm="petstore", error="insufficient_scope"')
      })

      test('When a key is created with --role admin, then over HTTP it may create a pet and call an admin-only operation, which a write key is refused', async (t) => {
        const cli = await cliOnFreshDatabase(t, store)
        const admin = await createKey(cli, 'operator', 'admin')
        const write = await createKey(cli, 'back-office')
        const { app } = await buildTestApp(t, { databaseUrl: cli.databaseUrl, withKey: false })
        await addAdminOnlyRoutes(app)

        const create = await app.inject({ method: 'POST', url: '/v1/pets', headers: { ...bearer(admin.key), 'content-type': 'application/json' }, payload: JSON.stringify({ name: 'Rex', categoryId: 1 }) })
        const byAdmin = await app.inject({ method: 'POST', url: ADMIN_ONLY_PATH, headers: bearer(admin.key) })
        const byWrite = await app.inject({ method: 'POST', url: ADMIN_ONLY_PATH, headers: bearer(write.key) })
        const listed = await cli.run('keys', 'list', '--json')

        assert.equal(create.statusCode, 201)
        assert.equal(byAdmin.statusCode, 200)
        assertError(byWrite, 'insufficient_scope', 'needs a key with the admin role')
        assert.deepEqual(JSON.parse(listed.stdout).keys.map(({ name, role }: { name: string, role: string }) => [name, role]), [['operator', 'admin'], ['back-office', 'write']])
      })

      test('When keys create is given a role that does not exist, then it exits 2 naming --role, and creates nothing', async (t) => {
        const cli = await cliOnFreshDatabase(t, store)
        assert.equal((await cli.run('migrate')).code, 0)

        const result = await cli.run('keys', 'create', '--name', 'x', '--role', 'owner')

        assert.equal(result.code, 2)
        assert.match(result.stderr, /--role must be read, write or admin, got "owner"/)
        assert.doesNotMatch(result.stdout + result.stderr, KEY)
        assert.match((await cli.run('keys', 'list')).stdout, /^No API keys in /)
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
      test('When keys exist, then keys list names the database and shows id, name, role, created, last used and revoked, and never a key or its hash', async (t) => {
        const cli = await cliOnFreshDatabase(t, store)
        const used = await createKey(cli, 'ci')
        const unused = await createKey(cli, 'backup', 'read')
        const { app } = await buildTestApp(t, { databaseUrl: cli.databaseUrl, withKey: false })
        assert.equal((await app.inject({ method: 'GET', url: '/v1/pets', headers: bearer(used.key) })).statusCode, 200)

        const result = await cli.run('keys', 'list')

        assert.equal(result.code, 0, result.stderr)
        const [title, blank, header, ...rows] = result.stdout.trimEnd().split('\n').map((line) => line.split(/ {2,}/))
        assert.deepEqual(title, [`API keys in ${describeUrl(cli.databaseUrl)}:`])
        assert.deepEqual(blank, [''])
        assert.deepEqual(header, ['ID', 'NAME', 'ROLE', 'CREATED', 'LAST USED', 'REVOKED'])
        const iso = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/
        assert.equal(rows.length, 2)
        const [usedRow, unusedRow] = rows
        assert.deepEqual(usedRow?.slice(0, 3), [String(used.id), 'ci', 'write'])
        assert.match(usedRow?.[3] ?? '', iso)
        assert.match(usedRow?.[4] ?? '', iso, 'the key used over HTTP shows when it was last used')
        assert.equal(usedRow?.[5], '-')
        assert.deepEqual(unusedRow?.slice(0, 3), [String(unused.id), 'backup', 'read'])
        assert.deepEqual(unusedRow?.slice(4), ['-', '-'])
        for (const { key } of [used, unused]) {
          assert.ok(!result.stdout.includes(key), 'keys list printed a key')
          assert.ok(!result.stdout.includes(sha256Hex(key)), 'keys list printed a key hash')
        }
        assert.doesNotMatch(result.stdout, KEY)
      })
    })

    describe('keys list --json', () => {
      test('When keys list --json runs, then it prints one JSON document naming the database and every key with its role, and no key material', async (t) => {
        const cli = await cliOnFreshDatabase(t, store)
        const write = await createKey(cli, 'back-office')
        const read = await createKey(cli, 'storefront', 'read')

        const result = await cli.run('keys', 'list', '--json')

        assert.equal(result.code, 0, result.stderr)
        const listed = JSON.parse(result.stdout)
        assert.equal(listed.database, describeUrl(cli.databaseUrl))
        assert.deepEqual(listed.keys.map(({ id, name, role, lastUsedAt, revokedAt }: Record<string, unknown>) => ({ id, name, role, lastUsedAt, revokedAt })), [
          { id: write.id, name: 'back-office', role: 'write', lastUsedAt: null, revokedAt: null },
          { id: read.id, name: 'storefront', role: 'read', lastUsedAt: null, revokedAt: null }
        ])
        assert.ok(listed.keys.every((key: { createdAt: string }) => !Number.isNaN(Date.parse(key.createdAt))))
        assert.doesNotMatch(result.stdout, KEY)
        assert.ok(!result.stdout.includes(sha256Hex(write.key)), 'keys list --json printed a key hash')
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
        assert.ok(result.stdout.startsWith(`Revoked API key ${id} in ${describeUrl(cli.databaseUrl)};`), result.stdout)
        assert.equal(after.statusCode, 401)
        assert.equal(after.json().code, 'unauthorized')
        const listed = await cli.run('keys', 'list')
        assert.match(listed.stdout.split('\n')[3] ?? '', /Z$/, 'keys list shows when the key was revoked')
      })

      test('When the id names no key, then keys revoke exits 1 with a message naming the id', async (t) => {
        const cli = await cliOnFreshDatabase(t, store)
        await createKey(cli, 'ci')

        for (const id of ['999', '99999999999999999999']) {
          const result = await cli.run('keys', 'revoke', id)

          assert.equal(result.code, 1)
          assert.equal(result.stdout, '')
          assert.equal(result.stderr, `petstore: no active key has id ${id} in ${describeUrl(cli.databaseUrl)}\n`)
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

  const helpRequests = [['--help'], ['-h'], ['help'], ['keys', '--help'], ['keys', 'create', '--help'], ['keys', 'create', '-h'],
    ['keys', 'list', '--help'], ['keys', 'revoke', '--help'], ['keys', 'revoke', '3', '--help'], ['migrate', '--help']]
  for (const args of helpRequests) {
    test(`When "petstore ${args.join(' ')}" runs, then it prints the usage on stdout, exits 0 and opens no database`, async (t) => {
      const cli = await cliOnMissingFile(t)

      const result = await cli.run(...args)

      assert.equal(result.code, 0, result.stderr)
      assert.equal(result.stderr, '')
      const command = args.filter((arg) => !arg.startsWith('-') && arg !== 'help' && !/^\d+$/.test(arg)).join(' ')
      assert.ok(result.stdout.startsWith(`Usage: petstore ${command === 'keys' || command === '' ? '<command>' : command}`), result.stdout)
      assert.match(result.stdout, /DATABASE_URL/)
      assert.equal(existsSync(cli.databasePath), false, '--help must not create a database')
    })
  }

  for (const args of [['keys', 'list'], ['keys', 'list', '--json'], ['keys', 'revoke', '1']]) {
    test(`When "petstore ${args.join(' ')}" names a SQLite file that does not exist, then it says so, exits 1 and does not create it`, async (t) => {
      const cli = await cliOnMissingFile(t)

      const result = await cli.run(...args)

      assert.equal(result.code, 1)
      assert.equal(result.stdout, '')
      assert.match(result.stderr, new RegExp(`^petstore: sqlite:${cli.databasePath.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} does not exist, so it holds no keys`))
      assert.equal(existsSync(cli.databasePath), false, 'a read command must not create the database')
    })
  }

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

describe('operator CLI: the default database, wherever it runs', () => {
  test('When the server and the CLI start from different directories without DATABASE_URL, then both use the installation\'s data/petstore.db', async (t) => {
    const servers = serverProcesses(t)
    const scratch = await tempDir(t)
    const installation = await copyInstallation(join(scratch, 'petstore'))
    const elsewhere = join(scratch, 'elsewhere')
    const subfolder = join(installation, 'src', 'capabilities')
    await mkdir(elsewhere)
    const env = childEnv({ LOG_LEVEL: 'silent' })
    const server = await servers.start({}, { installation, cwd: elsewhere })
    const [, bootstrapKey = ''] = await server.waitForStdout(/Bearer (petstore_[A-Za-z0-9_-]{43})/)

    const created = await runCli(['keys', 'create', '--name', 'storefront', '--role', 'read'], env, { installation, cwd: subfolder })
    const listed = await runCli(['keys', 'list', '--json'], env, { installation, cwd: elsewhere })

    const database = join(installation, 'data', 'petstore.db')
    assert.equal(created.code, 0, created.stderr)
    assert.ok(created.stdout.includes(` in sqlite:${database}.`), `keys create names the installation's database:\n${created.stdout}`)
    assert.equal(listed.code, 0, listed.stderr)
    assert.equal(JSON.parse(listed.stdout).database, `sqlite:${database}`)
    assert.deepEqual(JSON.parse(listed.stdout).keys.map((key: { name: string, role: string }) => [key.name, key.role]), [['bootstrap', 'admin'], ['storefront', 'read']])
    const readKey = created.stdout.match(KEY)?.[0] ?? ''
    const asReader = await fetch(`${server.baseUrl}/v1/pets`, { headers: bearer(readKey) })
    const asBootstrap = await fetch(`${server.baseUrl}/v1/pets`, { method: 'POST', headers: { ...bearer(bootstrapKey), 'content-type': 'application/json' }, body: '{"name":"Rex","categoryId":1}' })
    assert.equal(asReader.status, 200, 'the running server accepts the key the CLI created from another directory')
    assert.equal(asBootstrap.status, 201)
    for (const dir of [elsewhere, subfolder]) assert.equal(existsSync(join(dir, 'data')), false, `a database was created under ${dir}`)
  })
})

describe('operator CLI: the package\'s bin, as npx runs it', () => {
  /** `npx petstore …` in the repository, as the README says: npm links the bin once and runs the file it points to. */
  async function npx (...args: string[]): Promise<string> {
    const { stdout } = await promisify(execFile)('npx', ['petstore', ...args], { cwd: PROJECT_ROOT, env: childEnv({ LOG_LEVEL: 'silent' }), timeout: 120_000 })
    return stdout
  }

  test('When dist/ is rebuilt, then npx petstore still runs: the build leaves the bin executable', { timeout: 5 * 60_000 }, async () => {
    const cli = join(PROJECT_ROOT, 'dist/bin/cli.js')
    assert.match(await npx('--help'), /^Usage: petstore <command>/)

    await promisify(execFile)('npm', ['run', 'build', '--silent'], { cwd: PROJECT_ROOT, timeout: 4 * 60_000 })

    assert.match(await npx('--help'), /^Usage: petstore <command>/)
    assert.equal((await stat(cli)).mode & 0o777, 0o755)
  })
})

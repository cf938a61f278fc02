import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { execSql, freshDatabaseUrl, testStores, withPostgres, type StoreKind } from '../helpers/databases.js'
import { loadMigrations } from '../../src/infra/database/migrator.js'
import { openStores } from '../helpers/stores.js'

/** Brings a fresh store to the schema of `version` by its own migration files, as a release of that version left it. */
async function applyMigrationsThrough (databaseUrl: string, kind: StoreKind, version: number): Promise<void> {
  const migrations = loadMigrations(kind).slice(0, version)
  const record = 'INSERT INTO schema_migrations (version, name, applied_at) VALUES ($1, $2, $3)'
  if (kind === 'sqlite') {
    const { Database } = await import('../../src/infra/database/sqlite/driver.js')
    const db = new Database(databaseUrl.slice('sqlite:'.length))
    try {
      db.exec('CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)')
      for (const { version, name, sql } of migrations) {
        db.exec(sql)
        db.prepare(record.replace(/\$\d/g, '?')).run(version, name, new Date().toISOString())
      }
    } finally {
      db.close()
    }
    return
  }
  await withPostgres(async (client) => {
    await client.query('CREATE TABLE schema_migrations (version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())')
    for (const { version, name, sql } of migrations) {
      await client.query(sql)
      await client.query(record, [version, name, new Date()])
    }
  }, databaseUrl)
}

// What every KeyStore promises, whatever its engine
for (const kind of testStores()) {
  describe(`KeyStore contract (${kind})`, () => {
    test('When instances race to create the first key, then exactly one key is created', async (t) => {
      const { databaseUrl } = await openStores(t, kind)
      const stores = await Promise.all(Array.from({ length: 4 }, async () => (await openStores(t, kind, databaseUrl)).keys))

      const created = await Promise.all(stores.map(async (store, i) => store.createFirstApiKey('bootstrap', `hash-${i}`)))

      assert.equal(created.filter((record) => record !== undefined).length, 1)
      assert.equal((await stores[0]!.listApiKeys()).length, 1)
    })

    test('When keys are created with and without a role, then each is stored, found and listed with its role (write by default)', async (t) => {
      const { keys } = await openStores(t, kind)

      const reader = await keys.createApiKey('storefront', 'hash-read', 'read')
      const writer = await keys.createApiKey('back-office', 'hash-write')
      const first = await keys.createFirstApiKey('bootstrap', 'hash-first')

      assert.equal(reader.role, 'read')
      assert.equal(writer.role, 'write')
      assert.equal(first, undefined)
      assert.equal((await keys.findActiveApiKeyByHash('hash-read'))?.role, 'read')
      assert.equal((await keys.findActiveApiKeyByHash('hash-write'))?.role, 'write')
      assert.deepEqual((await keys.listApiKeys()).map(({ name, role }) => [name, role]), [['storefront', 'read'], ['back-office', 'write']])
    })

    test('When the first key is created, then it has the admin role (the operator\'s), and an admin key can also be created like any other', async (t) => {
      const { keys } = await openStores(t, kind)

      const first = await keys.createFirstApiKey('bootstrap', 'hash-first')
      const admin = await keys.createApiKey('operator', 'hash-admin', 'admin')

      assert.equal(first?.role, 'admin')
      assert.equal(admin.role, 'admin')
      assert.equal((await keys.findActiveApiKeyByHash('hash-first'))?.role, 'admin')
    })

    test('When a database from before the admin role (0012) is migrated, then every key keeps its id, hash, role and times, ids go on after the highest ever given, and admin keys can be stored', async (t) => {
      const databaseUrl = await freshDatabaseUrl(t, kind)
      await applyMigrationsThrough(databaseUrl, kind, 12)
      const times = ['2026-01-02T03:04:05.006Z', '2026-02-03T04:05:06.007Z', '2026-03-04T05:06:07.008Z']
      const insert = 'INSERT INTO api_keys (name, key_hash, role, created_at, last_used_at, revoked_at) VALUES ($1, $2, $3, $4, $5, $6)'
      await execSql(databaseUrl, insert, ['storefront', 'hash-read', 'read', times[0], times[1], null])
      await execSql(databaseUrl, insert, ['back-office', 'hash-write', 'write', times[0], null, times[2]])
      await execSql(databaseUrl, insert, ['gone', 'hash-gone', 'write', times[1], null, null])
      // the highest id ever given is no longer in the table: the next key must not take it again
      await execSql(databaseUrl, 'DELETE FROM api_keys WHERE name = $1', ['gone'])
      await assert.rejects(execSql(databaseUrl, insert, ['operator', 'hash-admin-early', 'admin', times[2], null, null]), /CHECK|check constraint/, 'before 0013 the admin role is refused')

      const { keys, migration } = await openStores(t, kind, databaseUrl)
      const admin = await keys.createApiKey('operator', 'hash-admin', 'admin')

      assert.ok(migration.applied.includes('0013_admin_role.sql'), `applied: ${migration.applied.join(', ')}`)
      assert.deepEqual(await keys.listApiKeys(), [
        { id: 1, name: 'storefront', role: 'read', createdAt: times[0], lastUsedAt: times[1], revokedAt: null },
        { id: 2, name: 'back-office', role: 'write', createdAt: times[0], lastUsedAt: null, revokedAt: times[2] },
        { id: admin.id, name: 'operator', role: 'admin', createdAt: admin.createdAt, lastUsedAt: null, revokedAt: null }
      ])
      // PostgreSQL's identity also spent a value on the refused insert above; SQLite's counter only on rows committed
      assert.ok(admin.id > 3, `the new key took id ${admin.id}, which an earlier key had`)
      assert.equal((await keys.findActiveApiKeyByHash('hash-read'))?.id, 1)
      assert.equal(await keys.findActiveApiKeyByHash('hash-write'), undefined, 'a key revoked before stays revoked')
      await assert.rejects(execSql(databaseUrl, insert, ['x', 'hash-x', 'owner', times[2], null, null]), /CHECK|check constraint/, 'a role that does not exist is still refused')
      await assert.rejects(execSql(databaseUrl, insert, ['x', 'hash-read', 'read', times[2], null, null]), /UNIQUE|unique/, 'key hashes are still unique')
    })

    test('When a database from before roles is migrated, then its keys keep full access (the write role)', async (t) => {
      // the schema a release before 0003_api_key_roles left, by its own migration files: no list of what came
      // after it to undo by hand, so a new migration needs no line here
      const databaseUrl = await freshDatabaseUrl(t, kind)
      await applyMigrationsThrough(databaseUrl, kind, 2)
      await execSql(databaseUrl, 'INSERT INTO api_keys (name, key_hash, created_at) VALUES ($1, $2, $3)', ['old', 'hash-old', '2026-01-02T03:04:05.006Z'])

      const reopened = await openStores(t, kind, databaseUrl)

      assert.ok(reopened.migration.applied.includes('0003_api_key_roles.sql'), `applied: ${reopened.migration.applied.join(', ')}`)
      assert.equal((await reopened.keys.findActiveApiKeyByHash('hash-old'))?.role, 'write')
    })

    test('When a key was ever created, even if revoked since, then no first key is created', async (t) => {
      const { keys } = await openStores(t, kind)
      const key = await keys.createApiKey('old', 'hash-old')
      assert.equal(await keys.revokeApiKey(key.id), true)

      assert.equal(await keys.createFirstApiKey('bootstrap', 'hash-new'), undefined)
      assert.equal(await keys.findActiveApiKeyByHash('hash-new'), undefined)
    })

    test('When a key is revoked, then look-ups miss it, revoking it again reports false, and it is listed as revoked', async (t) => {
      const { keys } = await openStores(t, kind)
      const key = await keys.createApiKey('ci', 'hash-ci')
      assert.equal((await keys.findActiveApiKeyByHash('hash-ci'))?.id, key.id)

      assert.equal(await keys.revokeApiKey(key.id), true)

      assert.equal(await keys.findActiveApiKeyByHash('hash-ci'), undefined)
      assert.equal(await keys.revokeApiKey(key.id), false)
      const [listed] = await keys.listApiKeys()
      assert.match(listed?.revokedAt ?? '', /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/)
      assert.match(listed?.createdAt ?? '', /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/)
    })
  })
}

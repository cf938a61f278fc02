import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { execSql, testStores } from '../helpers/databases.js'
import { openStores } from '../helpers/stores.js'

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

    test('When the first key is created, then it has the write role', async (t) => {
      const { keys } = await openStores(t, kind)

      const first = await keys.createFirstApiKey('bootstrap', 'hash-first')

      assert.equal(first?.role, 'write')
    })

    test('When a database from before roles is migrated, then its keys keep full access (the write role)', async (t) => {
      const { keys, database, databaseUrl } = await openStores(t, kind)
      await keys.createApiKey('old', 'hash-old')
      await database.close()
      // back to the schema before 0003_api_key_roles (and the migrations after it): orders' inventory triggers on pets
      // and the attempts' retention trigger on events first
      const undoTriggers = kind === 'sqlite'
        ? ['DROP TRIGGER pet_counts_insert', 'DROP TRIGGER pet_counts_update', 'DROP TRIGGER pet_counts_delete', 'DROP TRIGGER webhook_attempts_retention']
        : ['DROP FUNCTION pet_counts_apply () CASCADE', 'DROP FUNCTION webhook_attempts_retention () CASCADE']
      for (const statement of undoTriggers) await execSql(databaseUrl, statement)
      for (const table of ['bus_positions', 'orders', 'pet_counts', 'webhook_attempts', 'webhook_deliveries', 'webhook_endpoints', 'event_retention', 'events']) await execSql(databaseUrl, `DROP TABLE ${table}`)
      await execSql(databaseUrl, 'ALTER TABLE api_keys DROP COLUMN role')
      await execSql(databaseUrl, 'DELETE FROM schema_migrations WHERE version >= 3')

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

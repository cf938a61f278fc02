import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { SchemaTooNewError } from '../../../src/infra/database/migrator.js'
import { openDatabase } from '../../../src/infra/database/open-database.js'
import { loadConfig } from '../../../src/infra/config/config.js'
import { execSql, freshDatabaseUrl, testStores } from '../../helpers/databases.js'
import { openStores } from '../../helpers/stores.js'

// What every engine's database promises: migrations, settings
for (const kind of testStores()) {
  describe(`Database contract (${kind})`, () => {
    test('When migrate runs twice, then the second run applies nothing', async (t) => {
      const first = await openStores(t, kind)
      assert.ok(first.migration.applied.length >= 1)

      const second = await openStores(t, kind, first.databaseUrl)

      assert.deepEqual(second.migration, { version: first.migration.version, applied: [] })
    })

    test('When several openers migrate one empty database at once, then the migrations are applied exactly once', async (t) => {
      const databaseUrl = await freshDatabaseUrl(t, kind)

      const opened = await Promise.all(Array.from({ length: 5 }, async () => openStores(t, kind, databaseUrl)))

      const applied = opened.map(({ migration }) => migration.applied.length)
      assert.equal(applied.filter((count) => count > 0).length, 1, `applied per opener: ${applied.join(', ')}`)
      const rows = await execSql(databaseUrl, 'SELECT version FROM schema_migrations ORDER BY version')
      assert.deepEqual(rows.map((row) => Number(row.version)), Array.from({ length: opened[0]!.migration.version }, (_, i) => i + 1))
    })

    test('When the database was migrated by a newer release, then opening it is refused with a clear message', async (t) => {
      const { database, migration, databaseUrl } = await openStores(t, kind)
      await database.close()
      await execSql(databaseUrl, 'INSERT INTO schema_migrations (version, name, applied_at) VALUES ($1, $2, $3)',
        [migration.version + 1, '9999_future.sql', new Date().toISOString()])

      await assert.rejects(openDatabase(loadConfig({ DATABASE_URL: databaseUrl }).database), (error: unknown) => {
        assert.ok(error instanceof SchemaTooNewError)
        assert.match(error.message, new RegExp(`version ${migration.version + 1}, newer than this petstore release knows \\(${migration.version}\\)`))
        return true
      })
    })

    test('When a setting is ensured twice, then the first value wins', async (t) => {
      const { database } = await openStores(t, kind)

      assert.equal(await database.ensureSetting('s', 'first'), 'first')
      assert.equal(await database.ensureSetting('s', 'second'), 'first')
    })
  })
}

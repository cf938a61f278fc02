import assert from 'node:assert/strict'
import { join } from 'node:path'
import { describe, test } from 'node:test'
import Database from 'better-sqlite3'
import { loadConfig } from '../../src/config.js'
import { SchemaTooNewError } from '../../src/store/migrations.js'
import { openStore } from '../../src/store/open-store.js'
import { SqlitePetStore } from '../../src/store/sqlite-store.js'
import { tempDir } from '../helpers/build-app.js'

describe('SqlitePetStore', () => {
  test('When a file store is opened, then writes are durable: WAL with synchronous=FULL', async (t) => {
    const path = join(await tempDir(t), 'pets.db')
    const { store } = await openStore(loadConfig({ DATABASE_URL: `sqlite:${path}` }).database)
    t.after(() => store.close())

    const db = new Database(path, { readonly: true })
    t.after(() => db.close())
    assert.equal(db.pragma('journal_mode', { simple: true }), 'wal')
    // synchronous is per connection, so ask the store's own connection through its statement of it
    assert.equal((store as SqlitePetStore).synchronousMode(), 'full')
  })

  test('When the directory of the file does not exist, then it is created', async (t) => {
    const path = join(await tempDir(t), 'nested', 'deeper', 'pets.db')

    const { store } = await openStore({ kind: 'sqlite', path })
    t.after(() => store.close())

    assert.deepEqual((await store.listPets({ limit: 5 })).pets, [])
  })

  test('When migrate runs twice, then the second run applies nothing', async (t) => {
    const path = join(await tempDir(t), 'pets.db')
    const first = await openStore({ kind: 'sqlite', path })
    assert.ok(first.migration.applied.length >= 1)
    await first.store.close()

    const second = await openStore({ kind: 'sqlite', path })
    t.after(() => second.store.close())

    assert.deepEqual(second.migration, { version: first.migration.version, applied: [] })
  })

  test('When the database was migrated by a newer release, then opening it is refused with a clear message', async (t) => {
    const path = join(await tempDir(t), 'pets.db')
    const { store, migration } = await openStore({ kind: 'sqlite', path })
    await store.close()
    const db = new Database(path)
    db.prepare('INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)').run(migration.version + 1, '9999_future.sql', new Date().toISOString())
    db.close()

    await assert.rejects(openStore({ kind: 'sqlite', path }), (error: unknown) => {
      assert.ok(error instanceof SchemaTooNewError)
      assert.match(error.message, new RegExp(`version ${migration.version + 1}, newer than this petstore release knows \\(${migration.version}\\)`))
      return true
    })
  })

  test('When a page is asked for, then it starts after afterId, honours the filter and says whether more exist', async (t) => {
    const { store } = await openStore({ kind: 'sqlite-memory' })
    t.after(() => store.close())
    const statuses = ['available', 'sold', 'available', 'pending', 'available'] as const
    const pets = []
    for (const [i, status] of statuses.entries()) pets.push(await store.createPet({ name: `p${i}`, categoryId: i, status }))

    assert.deepEqual(await store.listPets({ limit: 2 }), { pets: pets.slice(0, 2), hasMore: true })
    assert.deepEqual(await store.listPets({ limit: 2, afterId: pets[3]!.id }), { pets: pets.slice(4), hasMore: false })
    assert.deepEqual(await store.listPets({ limit: 2, status: 'available' }), { pets: [pets[0], pets[2]], hasMore: true })
    assert.deepEqual(await store.listPets({ limit: 2, status: 'available', afterId: pets[2]!.id }), { pets: [pets[4]], hasMore: false })
  })

  test('When a setting is ensured twice, then the first value wins', async (t) => {
    const { store } = await openStore({ kind: 'sqlite-memory' })
    t.after(() => store.close())

    assert.equal(await store.ensureSetting('s', 'first'), 'first')
    assert.equal(await store.ensureSetting('s', 'second'), 'first')
  })

  test('When the list query runs, then SQLite walks the (status, id) index or the primary key, never a sort', async (t) => {
    const store = new SqlitePetStore({ memory: true })
    t.after(() => store.close())
    await store.migrate()

    const filtered = store.explainListPets(true)
    const unfiltered = store.explainListPets(false)

    assert.match(filtered, /SEARCH pets USING INDEX pets_status_id \(status=\? AND id>\?\)/)
    assert.match(unfiltered, /SEARCH pets USING INTEGER PRIMARY KEY \(rowid>\?\)/)
    assert.doesNotMatch(`${filtered}; ${unfiltered}`, /TEMP B-TREE/)
  })
})

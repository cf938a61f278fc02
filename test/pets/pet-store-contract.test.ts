import assert from 'node:assert/strict'
import { describe, test, type TestContext } from 'node:test'
import { setTimeout as delay } from 'node:timers/promises'
import { loadConfig } from '../../src/infra/config/config.js'
import { SchemaTooNewError } from '../../src/infra/database/migrator.js'
import { openStore } from '../../src/infra/database/open-database.js'
import type { MigrationResult, PetStore } from '../../src/capabilities/pets/store/pet-store.js'
import type { Pet } from '../../src/capabilities/pets/pet-schemas.js'
import { execSql, freshDatabaseUrl, testStores, type StoreKind } from '../helpers/databases.js'

/** A migrated store on a fresh database, closed when the test ends. */
async function openFresh (t: TestContext, kind: StoreKind, databaseUrl?: string): Promise<{ store: PetStore, migration: MigrationResult, databaseUrl: string }> {
  const url = databaseUrl ?? await freshDatabaseUrl(t, kind)
  const { store, migration } = await openStore(loadConfig({ DATABASE_URL: url }).database)
  t.after(() => store.close())
  return { store, migration, databaseUrl: url }
}

/** The store's list version once it can tell one (at once on SQLite; on PostgreSQL once its LISTEN connection is up), or once it differs from `other`. */
async function versionOf (store: PetStore, other?: number): Promise<number> {
  const deadline = Date.now() + 5_000
  for (;;) {
    const version = store.listVersion()
    if (version !== undefined && version !== other) return version
    assert.ok(Date.now() < deadline, other === undefined ? 'the store never told its list version' : `the list version stayed ${other}`)
    await delay(10)
  }
}

// What every PetStore promises, whatever its engine
for (const kind of testStores()) {
  describe(`PetStore contract (${kind})`, () => {
    test('When migrate runs twice, then the second run applies nothing', async (t) => {
      const first = await openFresh(t, kind)
      assert.ok(first.migration.applied.length >= 1)

      const second = await openFresh(t, kind, first.databaseUrl)

      assert.deepEqual(second.migration, { version: first.migration.version, applied: [] })
    })

    test('When several openers migrate one empty database at once, then the migrations are applied exactly once', async (t) => {
      const databaseUrl = await freshDatabaseUrl(t, kind)

      const opened = await Promise.all(Array.from({ length: 5 }, async () => openFresh(t, kind, databaseUrl)))

      const applied = opened.map(({ migration }) => migration.applied.length)
      assert.equal(applied.filter((count) => count > 0).length, 1, `applied per opener: ${applied.join(', ')}`)
      const rows = await execSql(databaseUrl, 'SELECT version FROM schema_migrations ORDER BY version')
      assert.deepEqual(rows.map((row) => Number(row.version)), Array.from({ length: opened[0]!.migration.version }, (_, i) => i + 1))
    })

    test('When the database was migrated by a newer release, then opening it is refused with a clear message', async (t) => {
      const { store, migration, databaseUrl } = await openFresh(t, kind)
      await store.close()
      await execSql(databaseUrl, 'INSERT INTO schema_migrations (version, name, applied_at) VALUES ($1, $2, $3)',
        [migration.version + 1, '9999_future.sql', new Date().toISOString()])

      await assert.rejects(openStore(loadConfig({ DATABASE_URL: databaseUrl }).database), (error: unknown) => {
        assert.ok(error instanceof SchemaTooNewError)
        assert.match(error.message, new RegExp(`version ${migration.version + 1}, newer than this petstore release knows \\(${migration.version}\\)`))
        return true
      })
    })

    test('When a page is asked for, then it starts after afterId, honours the filter and says whether more exist', async (t) => {
      const { store } = await openFresh(t, kind)
      const statuses = ['available', 'sold', 'available', 'pending', 'available'] as const
      const pets = []
      for (const [i, status] of statuses.entries()) pets.push(await store.createPet({ name: `p${i}`, categoryId: i, status }))

      assert.deepEqual(await store.listPets({ limit: 2 }), { pets: pets.slice(0, 2), hasMore: true })
      assert.deepEqual(await store.listPets({ limit: 2, afterId: pets[3]!.id }), { pets: pets.slice(4), hasMore: false })
      assert.deepEqual(await store.listPets({ limit: 2, status: 'available' }), { pets: [pets[0], pets[2]], hasMore: true })
      assert.deepEqual(await store.listPets({ limit: 2, status: 'available', afterId: pets[2]!.id }), { pets: [pets[4]], hasMore: false })
    })

    test('When ids and category ids are at the edge of exact JavaScript integers, then they round-trip as numbers', async (t) => {
      const { store } = await openFresh(t, kind)

      const low = await store.createPet({ name: 'low', categoryId: -Number.MAX_SAFE_INTEGER, status: 'sold' })
      const high = await store.createPet({ name: 'high', categoryId: Number.MAX_SAFE_INTEGER, status: 'sold' })

      assert.deepEqual(await store.findPetById(low.id), { id: low.id, name: 'low', categoryId: -Number.MAX_SAFE_INTEGER, status: 'sold' })
      assert.deepEqual(await store.findPetById(high.id), { id: high.id, name: 'high', categoryId: Number.MAX_SAFE_INTEGER, status: 'sold' })
      assert.equal(typeof high.id, 'number')
    })

    test('When updatePet changes a pet, then it answers the pet before and after and keeps the change; the precondition sees the pet as stored', async (t) => {
      const { store } = await openFresh(t, kind)
      const pet = await store.createPet({ name: 'Rex', categoryId: 3, status: 'available' })
      const judged: Pet[] = []

      const outcome = await store.updatePet(pet.id, { name: 'Max', status: 'pending' }, (current) => { judged.push(current); return true })

      const changed = { ...pet, name: 'Max', status: 'pending' as const }
      assert.deepEqual(outcome, { outcome: 'updated', pet: changed, previous: pet })
      assert.deepEqual(judged, [pet])
      assert.deepEqual(await store.findPetById(pet.id), changed)
      assert.deepEqual(await store.listPets({ limit: 10, status: 'pending' }), { pets: [changed], hasMore: false })
    })

    test('When updatePet finds no pet, a failing precondition or a forbidden move, then it says which and writes nothing', async (t) => {
      const { store } = await openFresh(t, kind)
      const sold = await store.createPet({ name: 'Rex', categoryId: 3, status: 'sold' })

      assert.deepEqual(await store.updatePet(sold.id + 1, { name: 'Max' }), { outcome: 'not_found' })
      assert.deepEqual(await store.updatePet(sold.id, { name: 'Max' }, () => false), { outcome: 'precondition_failed' })
      assert.deepEqual(await store.updatePet(sold.id, { name: 'Max', status: 'available' }), { outcome: 'invalid_transition', from: 'sold', to: 'available' })
      assert.deepEqual(await store.findPetById(sold.id), sold)
    })

    test('When updatePet writes, then the list version moves, on this store and on another on the same database; when it changes nothing, it stays', async (t) => {
      const { store, databaseUrl } = await openFresh(t, kind)
      const { store: other } = await openFresh(t, kind, databaseUrl)
      const pet = await store.createPet({ name: 'Rex', categoryId: 3, status: 'available' })
      const before = await versionOf(store)
      const otherBefore = await versionOf(other)

      await store.updatePet(pet.id, { name: 'Rex', status: 'available' })
      assert.equal(store.listVersion(), before, 'a patch that changes nothing leaves the version')
      await store.updatePet(pet.id, { status: 'sold' })

      assert.notEqual(store.listVersion(), before, 'this store sees its own write at once')
      await versionOf(other, otherBefore)
    })

    test('When a setting is ensured twice, then the first value wins', async (t) => {
      const { store } = await openFresh(t, kind)

      assert.equal(await store.ensureSetting('s', 'first'), 'first')
      assert.equal(await store.ensureSetting('s', 'second'), 'first')
    })

    test('When instances race to create the first key, then exactly one key is created', async (t) => {
      const { databaseUrl } = await openFresh(t, kind)
      const stores = await Promise.all(Array.from({ length: 4 }, async () => (await openFresh(t, kind, databaseUrl)).store))

      const created = await Promise.all(stores.map(async (store, i) => store.createFirstApiKey('bootstrap', `hash-${i}`)))

      assert.equal(created.filter((record) => record !== undefined).length, 1)
      assert.equal((await stores[0]!.listApiKeys()).length, 1)
    })

    test('When keys are created with and without a role, then each is stored, found and listed with its role (write by default)', async (t) => {
      const { store } = await openFresh(t, kind)

      const reader = await store.createApiKey('storefront', 'hash-read', 'read')
      const writer = await store.createApiKey('back-office', 'hash-write')
      const first = await store.createFirstApiKey('bootstrap', 'hash-first')

      assert.equal(reader.role, 'read')
      assert.equal(writer.role, 'write')
      assert.equal(first, undefined)
      assert.equal((await store.findActiveApiKeyByHash('hash-read'))?.role, 'read')
      assert.equal((await store.findActiveApiKeyByHash('hash-write'))?.role, 'write')
      assert.deepEqual((await store.listApiKeys()).map(({ name, role }) => [name, role]), [['storefront', 'read'], ['back-office', 'write']])
    })

    test('When the first key is created, then it has the write role', async (t) => {
      const { store } = await openFresh(t, kind)

      const first = await store.createFirstApiKey('bootstrap', 'hash-first')

      assert.equal(first?.role, 'write')
    })

    test('When a database from before roles is migrated, then its keys keep full access (the write role)', async (t) => {
      const { store, databaseUrl } = await openFresh(t, kind)
      await store.createApiKey('old', 'hash-old')
      await store.close()
      // back to the schema before 0003_api_key_roles (and the migrations after it)
      for (const table of ['webhook_deliveries', 'webhook_endpoints', 'event_retention', 'events']) await execSql(databaseUrl, `DROP TABLE ${table}`)
      await execSql(databaseUrl, 'ALTER TABLE api_keys DROP COLUMN role')
      await execSql(databaseUrl, 'DELETE FROM schema_migrations WHERE version >= 3')

      const reopened = await openFresh(t, kind, databaseUrl)

      assert.ok(reopened.migration.applied.includes('0003_api_key_roles.sql'), `applied: ${reopened.migration.applied.join(', ')}`)
      assert.equal((await reopened.store.findActiveApiKeyByHash('hash-old'))?.role, 'write')
    })

    test('When a key was ever created, even if revoked since, then no first key is created', async (t) => {
      const { store } = await openFresh(t, kind)
      const key = await store.createApiKey('old', 'hash-old')
      assert.equal(await store.revokeApiKey(key.id), true)

      assert.equal(await store.createFirstApiKey('bootstrap', 'hash-new'), undefined)
      assert.equal(await store.findActiveApiKeyByHash('hash-new'), undefined)
    })

    test('When a key is revoked, then look-ups miss it, revoking it again reports false, and it is listed as revoked', async (t) => {
      const { store } = await openFresh(t, kind)
      const key = await store.createApiKey('ci', 'hash-ci')
      assert.equal((await store.findActiveApiKeyByHash('hash-ci'))?.id, key.id)

      assert.equal(await store.revokeApiKey(key.id), true)

      assert.equal(await store.findActiveApiKeyByHash('hash-ci'), undefined)
      assert.equal(await store.revokeApiKey(key.id), false)
      const [listed] = await store.listApiKeys()
      assert.match(listed?.revokedAt ?? '', /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/)
      assert.match(listed?.createdAt ?? '', /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/)
    })
  })
}

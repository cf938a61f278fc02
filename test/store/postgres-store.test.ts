import assert from 'node:assert/strict'
import { describe, test, type TestContext } from 'node:test'
import { loadConfig } from '../../src/config.js'
import { openStore } from '../../src/store/open-store.js'
import type { PetStore } from '../../src/store/pet-store.js'
import { parseInt8 } from '../../src/store/postgres-store.js'
import { execSql, freshDatabaseUrl, requiresPostgres, testDatabaseUrl, withSearchPath } from '../helpers/databases.js'

async function openOn (t: TestContext, databaseUrl: string): Promise<PetStore> {
  const { store } = await openStore(loadConfig({ DATABASE_URL: databaseUrl }).database)
  t.after(() => store.close())
  return store
}

describe('PostgresPetStore', requiresPostgres(), () => {
  test('When int8 text is parsed, then it is a number only when exactly representable, else a bigint', () => {
    assert.equal(parseInt8('9007199254740991'), Number.MAX_SAFE_INTEGER)
    assert.equal(parseInt8('-9007199254740991'), -Number.MAX_SAFE_INTEGER)
    assert.equal(parseInt8('0'), 0)
    assert.equal(parseInt8('9007199254740992'), 9007199254740992n)
    assert.equal(parseInt8('-9223372036854775808'), -9223372036854775808n)
  })

  test('When the schema is created, then ids are int8 identities that stop at 2^53 - 1', async (t) => {
    const databaseUrl = await freshDatabaseUrl(t, 'postgres')
    await openOn(t, databaseUrl)

    const columns = await execSql(databaseUrl,
      "SELECT table_name, data_type, is_identity, identity_generation, identity_maximum FROM information_schema.columns WHERE table_schema = current_schema() AND column_name = 'id' ORDER BY table_name")

    assert.deepEqual(columns, ['api_keys', 'pets'].map((table) => ({
      table_name: table, data_type: 'bigint', is_identity: 'YES', identity_generation: 'ALWAYS', identity_maximum: String(Number.MAX_SAFE_INTEGER)
    })))
  })

  test('When the last exact id is drawn, then it is returned as that exact number', async (t) => {
    const databaseUrl = await freshDatabaseUrl(t, 'postgres')
    const store = await openOn(t, databaseUrl)
    await execSql(databaseUrl, "SELECT setval(pg_get_serial_sequence('pets', 'id'), $1)", [String(Number.MAX_SAFE_INTEGER - 1)])

    const pet = await store.createPet({ name: 'last', categoryId: 1, status: 'available' })

    assert.equal(pet.id, Number.MAX_SAFE_INTEGER)
    assert.deepEqual(await store.findPetById(Number.MAX_SAFE_INTEGER), pet)
  })

  test('When pets are created concurrently through two pools, then every listing is a prefix of the final one (ids commit in order)', async (t) => {
    const databaseUrl = await freshDatabaseUrl(t, 'postgres')
    const [a, b] = [await openOn(t, databaseUrl), await openOn(t, databaseUrl)] as const
    const writers = new AbortController()
    const seen: number[][] = []
    const reader = (async () => {
      while (!writers.signal.aborted) seen.push((await b.listPets({ limit: 1000 })).pets.map((pet) => pet.id))
    })()

    await Promise.all(Array.from({ length: 16 }, async (_, writer) => {
      for (let i = 0; i < 25; i++) await (writer % 2 === 0 ? a : b).createPet({ name: `w${writer}-${i}`, categoryId: writer, status: 'available' })
    }))
    writers.abort()
    await reader

    const final = (await a.listPets({ limit: 1000 })).pets.map((pet) => pet.id)
    assert.equal(final.length, 400)
    assert.ok(seen.length > 5, `the reader listed only ${seen.length} times`)
    for (const ids of seen) assert.deepEqual(ids, final.slice(0, ids.length), 'a pet appeared below one already listed')
  })

  test('When the search_path names a schema that does not exist, then opening fails saying so', async () => {
    const url = withSearchPath(testDatabaseUrl(), 'petstore_no_such_schema')

    await assert.rejects(openStore(loadConfig({ DATABASE_URL: url }).database), /search_path names no schema that exists/)
  })

  test('When the store describes itself, then the description names host, database and schema but never the password', async (t) => {
    const url = new URL(await freshDatabaseUrl(t, 'postgres'))
    url.password = 's3cret'
    // trust authentication ignores the password, so this connects
    const store = await openOn(t, url.toString())

    assert.match(store.description, /^postgres(ql)?:\/\/postgres@127\.0\.0\.1:5432\/test \(schema petstore_test_[0-9a-f]+\)$/)
    assert.doesNotMatch(store.description, /s3cret/)
  })
})

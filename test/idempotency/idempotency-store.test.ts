import assert from 'node:assert/strict'
import { describe, test, type TestContext } from 'node:test'
import { petFingerprint } from '../../src/capabilities/pets/pet-fingerprint.js'
import type { IdempotencyStore } from '../../src/capabilities/idempotency/store/idempotency-store.js'
import { IDEMPOTENCY_LEASE_MS, IDEMPOTENCY_TTL_MS } from '../../src/capabilities/idempotency/policy.js'
import { IdempotencyClaimLostError, type IdempotencyClaimRequest } from '../../src/capabilities/idempotency/claims.js'
import type { NewPetRecord, PetStore } from '../../src/capabilities/pets/store/pet-store.js'
import { buildTestApp, testStores, type StoreKind } from '../helpers/build-app.js'
import { execSql } from '../helpers/databases.js'

const REX: NewPetRecord = { name: 'Rex', categoryId: 3, status: 'pending' }
const MAX: NewPetRecord = { name: 'Max', categoryId: 3, status: 'pending' }

// later than the real clock, so the sweep the app runs at start never touches these records
const T0 = Date.now() + 60 * 60_000

/** The app's store on a fresh database, with the URL to read its tables. */
async function freshStore (t: TestContext, kind: StoreKind): Promise<{ store: PetStore, idempotency: IdempotencyStore, databaseUrl: string }> {
  const { app, databaseUrl } = await buildTestApp(t, { store: kind, withKey: false })
  return { store: app.petStore, idempotency: app.idempotencyStore, databaseUrl }
}

/** A claim request for `key` in scope "key:1" at time `at`, with the real lease and TTL. */
function claimOf (key: string, token: string, pet: NewPetRecord = REX, at = T0, scope = 'key:1'): IdempotencyClaimRequest {
  return { scope, key, fingerprint: petFingerprint(pet), token, now: new Date(at), leaseMs: IDEMPOTENCY_LEASE_MS, ttlMs: IDEMPOTENCY_TTL_MS }
}

async function petCount (store: PetStore): Promise<number> {
  return (await store.listPets({ limit: 1000 })).pets.length
}

async function recordsOf (databaseUrl: string): Promise<Array<{ scope: string, key: string, token: string | null, status: number | null }>> {
  const rows = await execSql(databaseUrl, 'SELECT scope, key, token, response_status FROM idempotency_keys ORDER BY scope, key')
  return rows.map((row) => ({
    scope: String(row.scope),
    key: String(row.key),
    token: row.token === null ? null : String(row.token as string),
    status: row.response_status === null ? null : Number(row.response_status)
  }))
}

for (const kind of testStores()) {
  describe(`PetStore Idempotency-Key records (${kind})`, () => {
    test('When a key is claimed for the first time, then it is claimed and held in flight by its token', async (t) => {
      const { idempotency, databaseUrl } = await freshStore(t, kind)

      const claim = await idempotency.claimIdempotencyKey(claimOf('k', 'token-1'))

      assert.deepEqual(claim, { outcome: 'claimed' })
      assert.deepEqual(await recordsOf(databaseUrl), [{ scope: 'key:1', key: 'k', token: 'token-1', status: null }])
    })

    test('When a held key is claimed again, then the same fingerprint is in flight and another one is a mismatch', async (t) => {
      const { idempotency } = await freshStore(t, kind)
      await idempotency.claimIdempotencyKey(claimOf('k', 'token-1'))

      assert.deepEqual(await idempotency.claimIdempotencyKey(claimOf('k', 'token-2')), { outcome: 'in_flight' })
      assert.deepEqual(await idempotency.claimIdempotencyKey(claimOf('k', 'token-3', MAX)), { outcome: 'mismatch' })
      assert.deepEqual(await idempotency.claimIdempotencyKey(claimOf('k', 'token-4', REX, T0 + IDEMPOTENCY_LEASE_MS - 1)), { outcome: 'in_flight' })
    })

    test('When createPet completes a claim, then the pet is stored and a later claim gets its 201 answer', async (t) => {
      const { store, idempotency, databaseUrl } = await freshStore(t, kind)
      await idempotency.claimIdempotencyKey(claimOf('k', 'token-1'))

      const pet = await store.createPet(REX, { scope: 'key:1', key: 'k', token: 'token-1' })

      assert.deepEqual(pet, { id: pet.id, ...REX })
      assert.deepEqual((await store.listPets({ limit: 10 })).pets, [pet])
      assert.deepEqual(await idempotency.claimIdempotencyKey(claimOf('k', 'token-2')), {
        outcome: 'completed',
        response: { status: 201, body: JSON.stringify(pet) }
      })
      assert.deepEqual(await idempotency.claimIdempotencyKey(claimOf('k', 'token-3', MAX)), { outcome: 'mismatch' })
      assert.deepEqual(await recordsOf(databaseUrl), [{ scope: 'key:1', key: 'k', token: null, status: 201 }])
    })

    test('When createPet completes with a token that does not hold the claim, then it throws IdempotencyClaimLostError and inserts no pet', async (t) => {
      const { store, idempotency } = await freshStore(t, kind)
      await idempotency.claimIdempotencyKey(claimOf('k', 'token-1'))

      await assert.rejects(store.createPet(REX, { scope: 'key:1', key: 'k', token: 'not-mine' }), IdempotencyClaimLostError)
      await assert.rejects(store.createPet(REX, { scope: 'key:1', key: 'never-claimed', token: 'token-1' }), IdempotencyClaimLostError)
      await assert.rejects(store.createPet(REX, { scope: 'key:2', key: 'k', token: 'token-1' }), IdempotencyClaimLostError)

      assert.equal(await petCount(store), 0)
      // the real holder is not disturbed
      assert.deepEqual(await idempotency.claimIdempotencyKey(claimOf('k', 'token-2')), { outcome: 'in_flight' })
      const pet = await store.createPet(REX, { scope: 'key:1', key: 'k', token: 'token-1' })
      assert.deepEqual((await store.listPets({ limit: 10 })).pets, [pet])
    })

    test('When a completed claim is completed again, then the second completion is refused and adds no pet', async (t) => {
      const { store, idempotency } = await freshStore(t, kind)
      await idempotency.claimIdempotencyKey(claimOf('k', 'token-1'))
      const pet = await store.createPet(REX, { scope: 'key:1', key: 'k', token: 'token-1' })

      await assert.rejects(store.createPet(REX, { scope: 'key:1', key: 'k', token: 'token-1' }), IdempotencyClaimLostError)

      assert.deepEqual((await store.listPets({ limit: 10 })).pets, [pet])
    })

    test('When a claim is released with its token, then the record is gone and the key can be claimed afresh, even for another body', async (t) => {
      const { store, idempotency, databaseUrl } = await freshStore(t, kind)
      await idempotency.claimIdempotencyKey(claimOf('k', 'token-1'))

      await idempotency.releaseIdempotencyKey({ scope: 'key:1', key: 'k', token: 'token-1' })

      assert.deepEqual(await recordsOf(databaseUrl), [])
      assert.deepEqual(await idempotency.claimIdempotencyKey(claimOf('k', 'token-2', MAX)), { outcome: 'claimed' })
      // the released token can no longer complete
      await assert.rejects(store.createPet(MAX, { scope: 'key:1', key: 'k', token: 'token-1' }), IdempotencyClaimLostError)
      assert.equal(await petCount(store), 0)
    })

    test('When a claim was abandoned past its lease, then another body may take the key over (nothing was stored under it)', async (t) => {
      const { store, idempotency } = await freshStore(t, kind)
      await idempotency.claimIdempotencyKey(claimOf('k', 'token-1'))

      assert.deepEqual(await idempotency.claimIdempotencyKey(claimOf('k', 'token-2', MAX, T0 + IDEMPOTENCY_LEASE_MS - 1)), { outcome: 'mismatch' })
      assert.deepEqual(await idempotency.claimIdempotencyKey(claimOf('k', 'token-2', MAX, T0 + IDEMPOTENCY_LEASE_MS)), { outcome: 'claimed' })
      const pet = await store.createPet(MAX, { scope: 'key:1', key: 'k', token: 'token-2' })
      assert.deepEqual(await idempotency.claimIdempotencyKey(claimOf('k', 'token-3', MAX, T0 + IDEMPOTENCY_LEASE_MS + 1)),
        { outcome: 'completed', response: { status: 201, body: JSON.stringify(pet) } })
    })

    test('When a release names another token, then nothing is released', async (t) => {
      const { idempotency, databaseUrl } = await freshStore(t, kind)
      await idempotency.claimIdempotencyKey(claimOf('k', 'token-1'))

      await idempotency.releaseIdempotencyKey({ scope: 'key:1', key: 'k', token: 'not-mine' })
      await idempotency.releaseIdempotencyKey({ scope: 'key:2', key: 'k', token: 'token-1' })

      assert.deepEqual(await recordsOf(databaseUrl), [{ scope: 'key:1', key: 'k', token: 'token-1', status: null }])
      assert.deepEqual(await idempotency.claimIdempotencyKey(claimOf('k', 'token-2')), { outcome: 'in_flight' })
    })

    test('When a completed record is released with its old token, then it stays and keeps replaying', async (t) => {
      const { store, idempotency } = await freshStore(t, kind)
      await idempotency.claimIdempotencyKey(claimOf('k', 'token-1'))
      const pet = await store.createPet(REX, { scope: 'key:1', key: 'k', token: 'token-1' })

      await idempotency.releaseIdempotencyKey({ scope: 'key:1', key: 'k', token: 'token-1' })

      assert.deepEqual(await idempotency.claimIdempotencyKey(claimOf('k', 'token-2')), {
        outcome: 'completed',
        response: { status: 201, body: JSON.stringify(pet) }
      })
    })

    test('When the lease of a claim has run out, then a new claim takes it over and only the new token can complete it', async (t) => {
      const { store, idempotency } = await freshStore(t, kind)
      await idempotency.claimIdempotencyKey(claimOf('k', 'old'))

      const takeOver = await idempotency.claimIdempotencyKey(claimOf('k', 'new', REX, T0 + IDEMPOTENCY_LEASE_MS))

      assert.deepEqual(takeOver, { outcome: 'claimed' })
      await assert.rejects(store.createPet(REX, { scope: 'key:1', key: 'k', token: 'old' }), IdempotencyClaimLostError)
      assert.equal(await petCount(store), 0)
      const pet = await store.createPet(REX, { scope: 'key:1', key: 'k', token: 'new' })
      assert.deepEqual(await idempotency.claimIdempotencyKey(claimOf('k', 'later', REX, T0 + IDEMPOTENCY_LEASE_MS + 1)), {
        outcome: 'completed',
        response: { status: 201, body: JSON.stringify(pet) }
      })
    })

    test('When a record has expired, then the key is claimed afresh, whatever the body', async (t) => {
      const { store, idempotency } = await freshStore(t, kind)
      await idempotency.claimIdempotencyKey(claimOf('k', 'token-1'))
      const first = await store.createPet(REX, { scope: 'key:1', key: 'k', token: 'token-1' })

      const justBefore = await idempotency.claimIdempotencyKey(claimOf('k', 'token-2', MAX, T0 + IDEMPOTENCY_TTL_MS - 1))
      const atExpiry = await idempotency.claimIdempotencyKey(claimOf('k', 'token-3', MAX, T0 + IDEMPOTENCY_TTL_MS))

      assert.deepEqual(justBefore, { outcome: 'mismatch' })
      assert.deepEqual(atExpiry, { outcome: 'claimed' })
      const second = await store.createPet(MAX, { scope: 'key:1', key: 'k', token: 'token-3' })
      assert.notEqual(second.id, first.id)
      assert.deepEqual(await idempotency.claimIdempotencyKey(claimOf('k', 'token-4', MAX, T0 + IDEMPOTENCY_TTL_MS + 1)), {
        outcome: 'completed',
        response: { status: 201, body: JSON.stringify(second) }
      })
    })

    test('When the same key is claimed in two scopes, then each scope has its own record', async (t) => {
      const { store, idempotency, databaseUrl } = await freshStore(t, kind)

      const one = await idempotency.claimIdempotencyKey(claimOf('k', 'token-1', REX, T0, 'key:1'))
      const two = await idempotency.claimIdempotencyKey(claimOf('k', 'token-2', MAX, T0, 'env:0123456789abcdef'))

      assert.deepEqual([one, two], [{ outcome: 'claimed' }, { outcome: 'claimed' }])
      const pet = await store.createPet(MAX, { scope: 'env:0123456789abcdef', key: 'k', token: 'token-2' })
      assert.deepEqual(await idempotency.claimIdempotencyKey(claimOf('k', 'token-3', REX, T0, 'key:1')), { outcome: 'in_flight' })
      assert.deepEqual(await idempotency.claimIdempotencyKey(claimOf('k', 'token-3', MAX, T0, 'env:0123456789abcdef')), {
        outcome: 'completed',
        response: { status: 201, body: JSON.stringify(pet) }
      })
      assert.equal((await recordsOf(databaseUrl)).length, 2)
    })

    test('When 20 claims of one key race, then exactly one is claimed and the others are in flight', async (t) => {
      const { idempotency } = await freshStore(t, kind)

      const claims = await Promise.all(Array.from({ length: 20 }, async (_, i) => idempotency.claimIdempotencyKey(claimOf('k', `token-${i}`))))

      const outcomes = claims.map((claim) => claim.outcome)
      assert.equal(outcomes.filter((outcome) => outcome === 'claimed').length, 1, outcomes.join(', '))
      assert.equal(outcomes.filter((outcome) => outcome === 'in_flight').length, 19, outcomes.join(', '))
    })

    test('When expired records are deleted, then the number deleted is returned and unexpired records stay', async (t) => {
      const { store, idempotency, databaseUrl } = await freshStore(t, kind)
      await idempotency.claimIdempotencyKey(claimOf('a', 'token-a', REX, T0))
      await idempotency.claimIdempotencyKey(claimOf('b', 'token-b', REX, T0 + 1))
      await store.createPet(REX, { scope: 'key:1', key: 'b', token: 'token-b' })
      await idempotency.claimIdempotencyKey(claimOf('c', 'token-c', REX, T0 + 2))

      assert.equal(await idempotency.deleteExpiredIdempotencyKeys(new Date(T0 + IDEMPOTENCY_TTL_MS - 1)), 0)
      assert.equal(await idempotency.deleteExpiredIdempotencyKeys(new Date(T0 + IDEMPOTENCY_TTL_MS + 1)), 2)
      assert.deepEqual((await recordsOf(databaseUrl)).map((record) => record.key), ['c'])
      assert.equal(await idempotency.deleteExpiredIdempotencyKeys(new Date(T0 + IDEMPOTENCY_TTL_MS + 1)), 0)
      assert.equal(await idempotency.deleteExpiredIdempotencyKeys(new Date(T0 + 2 * IDEMPOTENCY_TTL_MS)), 1)
      assert.deepEqual(await recordsOf(databaseUrl), [])
      // the pet created under "b" outlives its record
      assert.equal(await petCount(store), 1)
    })
  })
}

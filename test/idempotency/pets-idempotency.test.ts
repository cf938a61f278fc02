import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import { describe, test, type TestContext } from 'node:test'
import { setTimeout as delay } from 'node:timers/promises'
import type { LightMyRequestResponse } from 'fastify'
import pg from 'pg'
import { generateApiKey, hashApiKey } from '../../src/capabilities/keys/api-keys.js'
import { petFingerprint } from '../../src/capabilities/pets/pet-fingerprint.js'
import { IDEMPOTENCY_LEASE_MS, IDEMPOTENCY_TTL_MS } from '../../src/capabilities/idempotency/policy.js'
import { IdempotencyClaimLostError } from '../../src/capabilities/idempotency/claims.js'
import type { NewPetRecord } from '../../src/capabilities/pets/store/pet-store.js'
import { assertError } from '../helpers/assertions.js'
import { buildTestApp, listAllPets, testStores, type StoreKind, type TestApp } from '../helpers/build-app.js'
import { execSql, requiresPostgres } from '../helpers/databases.js'
import { manualClock } from '../helpers/clock.js'

/**
 * POSTs to /v1/pets with an optional Idempotency-Key; a string body is sent as it is
 * (to control its spelling), anything else as JSON.
 */
async function postIdempotent (test: TestApp, body: unknown, idempotencyKey?: string): Promise<LightMyRequestResponse> {
  return test.app.inject({
    method: 'POST',
    url: '/v1/pets',
    headers: {
      ...test.auth,
      'content-type': 'application/json',
      ...(idempotencyKey === undefined ? {} : { 'idempotency-key': idempotencyKey })
    },
    payload: typeof body === 'string' ? body : JSON.stringify(body)
  })
}

/** How many pets the store holds, read straight from the database. */
async function countPets (test: TestApp): Promise<number> {
  const rows = await execSql(test.databaseUrl, 'SELECT count(*) AS n FROM pets')
  return Number(rows[0]?.n)
}

/** The Idempotency-Key records of one scope, read straight from the database. */
async function idempotencyKeysOf (test: TestApp, scope: string): Promise<string[]> {
  const rows = await execSql(test.databaseUrl, 'SELECT key FROM idempotency_keys WHERE scope = $1 ORDER BY key', [scope])
  return rows.map((row) => String(row.key))
}

/** The idempotency scope of the key buildTestApp stored ("key:<its id>"). */
async function scopeOfTestKey (test: TestApp): Promise<string> {
  const keys = await test.app.keyStore.listApiKeys()
  const record = keys.find((key) => key.name === 'test')
  assert.ok(record !== undefined, 'buildTestApp stored a key named "test"')
  return `key:${record.id}`
}

/** The same app, seen by a client holding `key`. */
function asClient (test: TestApp, key: string): TestApp {
  return { ...test, key, auth: { authorization: `Bearer ${key}` } }
}

/** A second API key stored in the app's store, and a client using it. */
async function withSecondKey (test: TestApp): Promise<TestApp> {
  const key = generateApiKey()
  await test.app.keyStore.createApiKey('second', hashApiKey(key))
  return asClient(test, key)
}

/** Asserts a replay: 201, the first answer's body and Location, and `Idempotent-Replayed: true`. */
function assertReplayOf (res: LightMyRequestResponse, first: LightMyRequestResponse): void {
  assert.equal(res.statusCode, 201, res.body)
  assert.equal(res.headers['idempotent-replayed'], 'true')
  assert.deepEqual(res.json(), first.json())
  assert.equal(res.headers.location, first.headers.location)
}

/** Asserts a fresh create: 201 with a new pet and no `Idempotent-Replayed`. */
function assertCreated (res: LightMyRequestResponse, body: Record<string, unknown>): { id: number } {
  assert.equal(res.statusCode, 201, res.body)
  assert.equal(res.headers['idempotent-replayed'], undefined)
  const pet = res.json()
  assert.deepEqual(pet, { id: pet.id, status: 'available', ...body })
  assert.equal(res.headers.location, `/v1/pets/${pet.id}`)
  return pet
}

// each case: what is wrong with the header, and the value sent
const INVALID_KEYS: Array<[string, string]> = [
  ['empty', ''],
  ['256 characters long', 'k'.repeat(256)],
  ['256 characters long inside quotes', `"${'k'.repeat(256)}"`],
  ['a space inside', 'abc def'],
  ['only a space', ' '],
  ['a non-ASCII character (é sent as UTF-8 bytes, read as latin1)', Buffer.from('clé', 'utf8').toString('latin1')],
  ['a non-ASCII character (é as one latin1 byte)', 'cl\u00e9'],
  ['a quote inside', 'ab"cd'],
  ['an unbalanced quote', '"abc'],
  ['only quotes', '""'],
  ['a backslash inside', 'ab\\cd'],
  ['two values joined, as a repeated header arrives', 'abc, def'],
  ['a tab inside', 'abc\tdef']
]

const REX = { name: 'Rex', categoryId: 3, status: 'pending' } as const

for (const store of testStores()) {
  describe(`POST /v1/pets with Idempotency-Key (${store})`, () => {
    test('When a create is repeated with the same key and body, then the first answer is replayed and nothing new is created', async (t) => {
      const app = await buildTestApp(t, { store })

      const first = await postIdempotent(app, REX, 'order-1')
      const repeat = await postIdempotent(app, REX, 'order-1')
      const third = await postIdempotent(app, REX, 'order-1')

      assertCreated(first, REX)
      assertReplayOf(repeat, first)
      assertReplayOf(third, first)
      assert.deepEqual(await listAllPets(app), [first.json()])
      assert.equal(await countPets(app), 1)
    })

    test('When the same body is written differently (key order, spacing, default status, 3.0 for 3), then it counts as the same body and is replayed', async (t) => {
      const app = await buildTestApp(t, { store })
      const first = await postIdempotent(app, '{"name":"Rex","categoryId":3}', 'same-body')
      assertCreated(first, { name: 'Rex', categoryId: 3 })

      const spellings = [
        '{"categoryId":3,"name":"Rex"}',
        '  {\n  "name" : "Rex",\t"categoryId" :\n 3 }\n',
        '{"name":"Rex","categoryId":3,"status":"available"}',
        '{"status":"available","categoryId":3,"name":"Rex"}',
        '{"name":"\\u0052ex","categoryId":3}',
        '{"name":"Rex","categoryId":3.0}',
        '{"name":"Rex","categoryId":0.3e1}'
      ]
      for (const spelling of spellings) {
        assertReplayOf(await postIdempotent(app, spelling, 'same-body'), first)
      }
      assert.equal(await countPets(app), 1)
    })

    test('When the same key comes with a different body, then 422 idempotency_key_reused and nothing is created', async (t) => {
      const app = await buildTestApp(t, { store })
      const first = await postIdempotent(app, REX, 'reused')
      assertCreated(first, REX)

      for (const other of [
        { ...REX, name: 'Max' },
        { ...REX, name: 'Rex ' },
        { ...REX, categoryId: 4 },
        { ...REX, status: 'sold' },
        { name: 'Rex', categoryId: 3 }
      ]) {
        const res = await postIdempotent(app, other, 'reused')
        assertError(res, 'idempotency_key_reused', 'reused')
        assert.equal(res.headers['idempotent-replayed'], undefined)
      }
      assert.deepEqual(await listAllPets(app), [first.json()])
      // the record still answers the original body
      assertReplayOf(await postIdempotent(app, REX, 'reused'), first)
    })

    test('When the key was claimed by a request still in flight, then 409 idempotency_request_in_progress with Retry-After and nothing is created', async (t) => {
      const clock = manualClock()
      const app = await buildTestApp(t, { store, clock })
      const pet: NewPetRecord = { name: 'Rex', categoryId: 3, status: 'available' }
      const claim = await app.app.idempotencyStore.claimIdempotencyKey({
        scope: await scopeOfTestKey(app),
        key: 'busy',
        fingerprint: petFingerprint(pet),
        token: 'the-first-request',
        now: new Date(clock.now()),
        leaseMs: IDEMPOTENCY_LEASE_MS,
        ttlMs: IDEMPOTENCY_TTL_MS
      })
      assert.deepEqual(claim, { outcome: 'claimed' })

      const res = await postIdempotent(app, { name: 'Rex', categoryId: 3 }, 'busy')
      clock.advance(IDEMPOTENCY_LEASE_MS - 1)
      const stillBusy = await postIdempotent(app, { name: 'Rex', categoryId: 3, status: 'available' }, 'busy')

      for (const answer of [res, stillBusy]) {
        assertError(answer, 'idempotency_request_in_progress', 'busy')
        assert.equal(answer.headers['retry-after'], '1')
      }
      assert.equal(await countPets(app), 0)
    })

    test('When the claim of an in-flight request is released, then the next request with its key runs afresh', async (t) => {
      const clock = manualClock()
      const app = await buildTestApp(t, { store, clock })
      const scope = await scopeOfTestKey(app)
      const pet: NewPetRecord = { name: 'Rex', categoryId: 3, status: 'pending' }
      await app.app.idempotencyStore.claimIdempotencyKey({
        scope, key: 'released', fingerprint: petFingerprint(pet), token: 'first', now: new Date(clock.now()), leaseMs: IDEMPOTENCY_LEASE_MS, ttlMs: IDEMPOTENCY_TTL_MS
      })
      assertError(await postIdempotent(app, REX, 'released'), 'idempotency_request_in_progress')

      await app.app.idempotencyStore.releaseIdempotencyKey({ scope, key: 'released', token: 'first' })
      const res = await postIdempotent(app, { ...REX, name: 'Other' }, 'released')

      assertCreated(res, { ...REX, name: 'Other' })
      assert.equal(await countPets(app), 1)
    })

    test('When the in-flight claim has outlived its lease, then the request takes it over and creates the pet; the late holder cannot complete it', async (t) => {
      const clock = manualClock()
      const app = await buildTestApp(t, { store, clock })
      const scope = await scopeOfTestKey(app)
      const pet: NewPetRecord = { ...REX }
      await app.app.idempotencyStore.claimIdempotencyKey({
        scope, key: 'abandoned', fingerprint: petFingerprint(pet), token: 'dead-request', now: new Date(clock.now()), leaseMs: IDEMPOTENCY_LEASE_MS, ttlMs: IDEMPOTENCY_TTL_MS
      })

      clock.advance(IDEMPOTENCY_LEASE_MS + 1)
      const res = await postIdempotent(app, REX, 'abandoned')

      const created = assertCreated(res, REX)
      // the request that held the claim before comes back: it must neither complete the record nor add a pet
      await assert.rejects(app.app.petStore.createPet(pet, { scope, key: 'abandoned', token: 'dead-request' }), IdempotencyClaimLostError)
      assert.deepEqual((await listAllPets(app)).map((p) => p.id), [created.id])
      assertReplayOf(await postIdempotent(app, REX, 'abandoned'), res)
    })

    test('When creates without a key share a commit with one whose claim was lost, then theirs are written with their events and the lost one alone is undone', async (t) => {
      const clock = manualClock()
      const app = await buildTestApp(t, { store, clock })
      const scope = await scopeOfTestKey(app)
      const lost: NewPetRecord = { name: 'Lost', categoryId: 3, status: 'available' }
      const claim = { scope, key: 'lost', fingerprint: petFingerprint(lost), leaseMs: IDEMPOTENCY_LEASE_MS, ttlMs: IDEMPOTENCY_TTL_MS }
      await app.app.idempotencyStore.claimIdempotencyKey({ ...claim, token: 'late', now: new Date(clock.now()) })
      clock.advance(IDEMPOTENCY_LEASE_MS + 1)
      assert.deepEqual(await app.app.idempotencyStore.claimIdempotencyKey({ ...claim, token: 'new-holder', now: new Date(clock.now()) }), { outcome: 'claimed' })

      // submitted in one turn: one batch, the lost claim between two creates without one
      const [before, late, after] = await Promise.allSettled([
        app.app.petStore.createPet({ name: 'Before', categoryId: 1, status: 'available' }),
        app.app.petStore.createPet(lost, { scope, key: 'lost', token: 'late' }),
        app.app.petStore.createPet({ name: 'After', categoryId: 2, status: 'sold' })
      ])

      assert.equal(late?.status, 'rejected')
      assert.ok(late.reason instanceof IdempotencyClaimLostError, String(late.reason))
      assert.ok(before?.status === 'fulfilled' && after?.status === 'fulfilled')
      assert.deepEqual((await listAllPets(app)).map((pet) => pet.name), ['Before', 'After'])
      const events = await execSql(app.databaseUrl, 'SELECT type, data FROM events ORDER BY id')
      assert.deepEqual(events.map((event) => [event.type, (typeof event.data === 'string' ? JSON.parse(event.data) : event.data).pet.id]),
        [['pet.created', before.value.id], ['pet.created', after.value.id]])
      const counts = await execSql(app.databaseUrl, 'SELECT category_id, status, pets FROM pet_category_counts WHERE pets > 0 ORDER BY category_id')
      assert.deepEqual(counts.map((row) => [Number(row.category_id), row.status, Number(row.pets)]), [[1, 'available', 1], [2, 'sold', 1]])
    })

    test('When a request got 409 because the first was in flight, then its retry after the first finished gets the replay', async (t) => {
      const clock = manualClock()
      const app = await buildTestApp(t, { store, clock })
      const scope = await scopeOfTestKey(app)
      const pet: NewPetRecord = { ...REX }
      await app.app.idempotencyStore.claimIdempotencyKey({
        scope, key: 'retry-me', fingerprint: petFingerprint(pet), token: 'first', now: new Date(clock.now()), leaseMs: IDEMPOTENCY_LEASE_MS, ttlMs: IDEMPOTENCY_TTL_MS
      })
      assertError(await postIdempotent(app, REX, 'retry-me'), 'idempotency_request_in_progress')

      const created = await app.app.petStore.createPet(pet, { scope, key: 'retry-me', token: 'first' })
      const retry = await postIdempotent(app, REX, 'retry-me')

      assert.equal(retry.statusCode, 201, retry.body)
      assert.equal(retry.headers['idempotent-replayed'], 'true')
      assert.deepEqual(retry.json(), created)
      assert.equal(retry.headers.location, `/v1/pets/${created.id}`)
      assert.equal(await countPets(app), 1)
    })

    test('When two API keys use the same Idempotency-Key, then each creates its own pet and replays only its own', async (t) => {
      const app = await buildTestApp(t, { store })
      const other = await withSecondKey(app)

      const mine = await postIdempotent(app, REX, 'shared-key')
      const theirs = await postIdempotent(other, REX, 'shared-key')

      assertCreated(mine, REX)
      assertCreated(theirs, REX)
      assert.notEqual(mine.json().id, theirs.json().id)
      assertReplayOf(await postIdempotent(app, REX, 'shared-key'), mine)
      assertReplayOf(await postIdempotent(other, REX, 'shared-key'), theirs)
      // a different body is refused for each, independently
      assertError(await postIdempotent(other, { ...REX, name: 'Max' }, 'shared-key'), 'idempotency_key_reused')
      assert.equal(await countPets(app), 2)
    })

    test('When a key from PETSTORE_API_KEYS sends an Idempotency-Key, then it is honoured under that key alone', async (t) => {
      const envKey = generateApiKey()
      const built = await buildTestApp(t, { store, env: { PETSTORE_API_KEYS: envKey } })
      const viaEnv = asClient(built, envKey)

      const first = await postIdempotent(viaEnv, REX, 'env-key')
      const repeat = await postIdempotent(viaEnv, REX, 'env-key')
      const storedKeysPet = await postIdempotent(built, REX, 'env-key')

      assertCreated(first, REX)
      assertReplayOf(repeat, first)
      assertCreated(storedKeysPet, REX)
      assertError(await postIdempotent(viaEnv, { ...REX, categoryId: 9 }, 'env-key'), 'idempotency_key_reused')
      assert.equal(await countPets(built), 2)
      const scopes = await execSql(built.databaseUrl, 'SELECT scope FROM idempotency_keys WHERE key = $1 ORDER BY scope', ['env-key'])
      assert.deepEqual(scopes.map((row) => String(row.scope).replace(/:.*/, ':')), ['env:', 'key:'])
    })

    test('When the service restarts on the same database, then a repeat with a stored API key replays the answer given before', async (t) => {
      const first = await buildTestApp(t, { store })
      const created = await postIdempotent(first, REX, 'survives-restart')
      assertCreated(created, REX)
      await first.app.close()

      const second = asClient(await buildTestApp(t, { databaseUrl: first.databaseUrl, withKey: false }), first.key)
      const repeat = await postIdempotent(second, REX, 'survives-restart')

      assertReplayOf(repeat, created)
      assertError(await postIdempotent(second, { ...REX, name: 'Max' }, 'survives-restart'), 'idempotency_key_reused')
      assert.equal(await countPets(second), 1)
    })

    test('When the service restarts with the same PETSTORE_API_KEYS, then a repeat with an environment key replays the answer given before', async (t) => {
      const envKey = generateApiKey()
      const env = { PETSTORE_API_KEYS: envKey }
      const first = asClient(await buildTestApp(t, { store, env, withKey: false }), envKey)
      const created = await postIdempotent(first, REX, 'env-restart')
      assertCreated(created, REX)
      await first.app.close()

      const second = asClient(await buildTestApp(t, { databaseUrl: first.databaseUrl, env, withKey: false }), envKey)
      const repeat = await postIdempotent(second, REX, 'env-restart')

      assertReplayOf(repeat, created)
      assert.equal(await countPets(second), 1)
    })

    test('When 20 identical requests with one key arrive at once, then exactly one pet is created and every 201 carries it', async (t) => {
      const app = await buildTestApp(t, { store })

      const answers = await Promise.all(Array.from({ length: 20 }, async () => postIdempotent(app, REX, 'burst')))

      assertOnePetFromBurst(answers)
      assert.equal(await countPets(app), 1)
      // whoever got 409 retries and gets the pet that was created
      const created = answers.find((res) => res.statusCode === 201 && res.headers['idempotent-replayed'] === undefined)
      assert.ok(created !== undefined)
      assertReplayOf(await postIdempotent(app, REX, 'burst'), created)
    })

    test('When the record is older than 24 hours, then the key is processed afresh, even with another body', async (t) => {
      const clock = manualClock()
      const app = await buildTestApp(t, { store, clock })
      const first = await postIdempotent(app, REX, 'day-old')
      assertCreated(first, REX)

      clock.advance(IDEMPOTENCY_TTL_MS - 1)
      assertReplayOf(await postIdempotent(app, REX, 'day-old'), first)
      assertError(await postIdempotent(app, { ...REX, name: 'Max' }, 'day-old'), 'idempotency_key_reused')

      clock.advance(2)
      const fresh = await postIdempotent(app, { ...REX, name: 'Max' }, 'day-old')

      const max = assertCreated(fresh, { ...REX, name: 'Max' })
      assert.notEqual(max.id, first.json().id)
      assert.equal(await countPets(app), 2)
      // the new record answers from now on
      assertReplayOf(await postIdempotent(app, { ...REX, name: 'Max' }, 'day-old'), fresh)
      assertError(await postIdempotent(app, REX, 'day-old'), 'idempotency_key_reused')
    })

    test('When expired records are swept, then they are deleted and counted, and unexpired ones stay', async (t) => {
      const clock = manualClock()
      const app = await buildTestApp(t, { store, clock })
      const scope = await scopeOfTestKey(app)
      assertCreated(await postIdempotent(app, REX, 'early'), REX)
      clock.advance(60 * 60_000)
      const late = await postIdempotent(app, { ...REX, name: 'Late' }, 'late')
      assertCreated(late, { ...REX, name: 'Late' })

      assert.equal(await app.app.idempotencyExpiry.sweep(), 0)
      assert.deepEqual(await idempotencyKeysOf(app, scope), ['early', 'late'])

      clock.advance(IDEMPOTENCY_TTL_MS - 60 * 60_000 + 1)
      assert.equal(await app.app.idempotencyExpiry.sweep(), 1)
      assert.deepEqual(await idempotencyKeysOf(app, scope), ['late'])
      assertReplayOf(await postIdempotent(app, { ...REX, name: 'Late' }, 'late'), late)

      clock.advance(60 * 60_000)
      assert.equal(await app.app.idempotencyExpiry.sweep(), 1)
      assert.deepEqual(await idempotencyKeysOf(app, scope), [])
      assert.equal(await app.app.idempotencyExpiry.sweep(), 0)
      // the pets themselves are kept; only the records went
      assert.equal(await countPets(app), 2)
      assertCreated(await postIdempotent(app, { ...REX, name: 'Other' }, 'early'), { ...REX, name: 'Other' })
    })

    test('When the Idempotency-Key is malformed, then 400 names the header and nothing is created', async (t) => {
      const app = await buildTestApp(t, { store })

      for (const [problem, value] of INVALID_KEYS) {
        await t.test(`When it is ${problem}`, async () => {
          const res = await postIdempotent(app, REX, value)

          const { message } = assertError(res, 'invalid_request')
          // header names are case-insensitive; see the report for the one message that writes it in lower case
          assert.match(message, /idempotency-key/i)
        })
      }
      assert.equal(await countPets(app), 0)
      assert.deepEqual(await execSql(app.databaseUrl, 'SELECT key FROM idempotency_keys'), [])
    })

    test('When the Idempotency-Key is malformed, then the message says what a valid key looks like', async (t) => {
      const app = await buildTestApp(t, { store })

      const res = await postIdempotent(app, REX, 'has space')

      assertError(res, 'invalid_request', 'Idempotency-Key')
      assertError(res, 'invalid_request', '255')
    })

    test('When the Idempotency-Key is a UUID, a 255-character token or its quoted form, then it is accepted and replays', async (t) => {
      const app = await buildTestApp(t, { store })
      const longest = `A-z0.9_~!#$%&'()*+,/:;<=>?@[]^\`{|}${'k'.repeat(255)}`.slice(0, 255)
      assert.equal(longest.length, 255)

      for (const [i, key] of [randomUUID(), longest, `"${'q'.repeat(255)}"`].entries()) {
        const body = { ...REX, categoryId: i }
        const first = await postIdempotent(app, body, key)
        assertCreated(first, body)
        assertReplayOf(await postIdempotent(app, body, key), first)
      }
      assert.equal(await countPets(app), 3)
    })

    test('When a key is sent in the quoted structured-field form, then it is the same key as the bare token', async (t) => {
      const app = await buildTestApp(t, { store })

      const quoted = await postIdempotent(app, REX, '"abc"')
      const bare = await postIdempotent(app, REX, 'abc')
      const quotedAgain = await postIdempotent(app, REX, '"abc"')

      assertCreated(quoted, REX)
      assertReplayOf(bare, quoted)
      assertReplayOf(quotedAgain, quoted)
      assertError(await postIdempotent(app, { ...REX, name: 'Max' }, 'abc'), 'idempotency_key_reused')
      assert.deepEqual(await idempotencyKeysOf(app, await scopeOfTestKey(app)), ['abc'])
      assert.equal(await countPets(app), 1)
    })

    test('When keys differ only in letter case, then they are different keys', async (t) => {
      const app = await buildTestApp(t, { store })

      const lower = await postIdempotent(app, REX, 'case-key')
      const upper = await postIdempotent(app, REX, 'CASE-KEY')

      assertCreated(lower, REX)
      assertCreated(upper, REX)
      assert.equal(await countPets(app), 2)
    })

    test('When no Idempotency-Key is sent, then every request creates a pet and none is marked replayed', async (t) => {
      const app = await buildTestApp(t, { store })

      const first = await postIdempotent(app, REX)
      const second = await postIdempotent(app, REX)

      assertCreated(first, REX)
      assertCreated(second, REX)
      assert.notEqual(first.json().id, second.json().id)
      assert.equal(await countPets(app), 2)
      assert.deepEqual(await execSql(app.databaseUrl, 'SELECT key FROM idempotency_keys'), [])
    })

    test('When the create fails after the key was claimed, then the claim is released and the retry runs afresh', async (t) => {
      const app = await buildTestApp(t, { store })
      await refuseInsertsIntoPets(app)

      const failed = await postIdempotent(app, REX, 'fails-once')

      if (store === 'postgres') {
        assertError(failed, 'service_unavailable')
        assert.equal(failed.headers['retry-after'], '1')
      } else {
        assertError(failed, 'internal_error')
      }
      assert.deepEqual(await execSql(app.databaseUrl, 'SELECT key FROM idempotency_keys'), [])
      assert.equal(await countPets(app), 0)
      await execSql(app.databaseUrl, 'DROP TRIGGER refuse_pets' + (store === 'postgres' ? ' ON pets' : ''))
      // a retry, even with a corrected body, is a first request again
      const retry = await postIdempotent(app, { ...REX, name: 'Max' }, 'fails-once')
      assertCreated(retry, { ...REX, name: 'Max' })
      assertReplayOf(await postIdempotent(app, { ...REX, name: 'Max' }, 'fails-once'), retry)
      assert.equal(await countPets(app), 1)
    })

    test('When a request with a key is refused for its body, then the key is not used up', async (t) => {
      const app = await buildTestApp(t, { store })

      assertError(await postIdempotent(app, { name: '', categoryId: 3 }, 'not-yet'), 'invalid_request', 'name')
      assertError(await postIdempotent(app, { ...REX, colour: 'brown' }, 'not-yet'), 'invalid_request', 'colour')
      assertError(await postIdempotent(app, '{"name": "Rex", ', 'not-yet'), 'malformed_json')
      assert.deepEqual(await execSql(app.databaseUrl, 'SELECT key FROM idempotency_keys'), [])
      const valid = await postIdempotent(app, REX, 'not-yet')

      assertCreated(valid, REX)
      assertReplayOf(await postIdempotent(app, REX, 'not-yet'), valid)
      // from now on it is used
      assertError(await postIdempotent(app, { ...REX, name: 'Max' }, 'not-yet'), 'idempotency_key_reused')
      assert.equal(await countPets(app), 1)
    })

    test('When a request with a key is refused for its API key, then the key is not used up', async (t) => {
      const app = await buildTestApp(t, { store })

      const res = await postIdempotent(asClient(app, generateApiKey()), REX, 'unauthorised')

      assertError(res, 'unauthorized')
      assertCreated(await postIdempotent(app, REX, 'unauthorised'), REX)
      assert.equal(await countPets(app), 1)
    })
  })
}

/** Answers to one burst of identical requests: all 201 with one pet (exactly one not a replay) or 409. */
function assertOnePetFromBurst (answers: LightMyRequestResponse[]): void {
  const statuses = answers.map((res) => res.statusCode)
  assert.ok(statuses.every((status) => status === 201 || status === 409), `statuses: ${statuses.join(', ')}`)
  const created = answers.filter((res) => res.statusCode === 201)
  assert.ok(created.length >= 1, `statuses: ${statuses.join(', ')}`)
  const bodies = new Set(created.map((res) => res.body))
  assert.equal(bodies.size, 1, `different 201 bodies: ${[...bodies].join(' | ')}`)
  assert.equal(new Set(created.map((res) => res.headers.location)).size, 1)
  assert.equal(created.filter((res) => res.headers['idempotent-replayed'] === undefined).length, 1, 'exactly one answer is the original create')
  for (const res of answers.filter((answer) => answer.statusCode === 409)) {
    assertError(res, 'idempotency_request_in_progress')
    assert.equal(res.headers['retry-after'], '1')
  }
}

/**
 * Makes every insert into pets fail inside the database (no mock of the store): SQLite aborts
 * it (a 500), PostgreSQL raises a serialization failure (SQLSTATE 40001, a 503 the client may retry).
 */
async function refuseInsertsIntoPets (test: TestApp): Promise<void> {
  if (test.databaseUrl.startsWith('sqlite:')) {
    await execSql(test.databaseUrl, "CREATE TRIGGER refuse_pets BEFORE INSERT ON pets BEGIN SELECT RAISE(ABORT, 'injected failure'); END")
    return
  }
  await execSql(test.databaseUrl, "CREATE FUNCTION refuse_pet () RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'injected failure' USING ERRCODE = '40001'; END $$")
  await execSql(test.databaseUrl, 'CREATE TRIGGER refuse_pets BEFORE INSERT ON pets FOR EACH ROW EXECUTE FUNCTION refuse_pet()')
}

/** Holds a lock on the pets table from another connection: inserts wait, reads do not. */
async function lockPetsTable (t: TestContext, databaseUrl: string): Promise<() => Promise<void>> {
  const client = new pg.Client({ connectionString: databaseUrl, connectionTimeoutMillis: 5_000 })
  await client.connect()
  t.after(() => client.end())
  await client.query('BEGIN')
  await client.query('LOCK TABLE pets IN EXCLUSIVE MODE')
  return async () => { await client.query('COMMIT') }
}

/** Polls until `check` holds (a few seconds at most). */
async function waitUntil (what: string, check: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + 5_000
  while (!await check()) {
    if (Date.now() > deadline) assert.fail(`timed out waiting until ${what}`)
    await delay(10)
  }
}

/** The token of the one record of `key`, or undefined while there is none. */
async function tokenOf (test: TestApp, key: string): Promise<string | null | undefined> {
  const rows = await execSql(test.databaseUrl, 'SELECT token FROM idempotency_keys WHERE key = $1', [key])
  return rows[0] === undefined ? undefined : rows[0].token as string | null
}

async function twoInstances (t: TestContext, store: StoreKind): Promise<[TestApp, TestApp]> {
  const a = await buildTestApp(t, { store })
  const b = asClient(await buildTestApp(t, { databaseUrl: a.databaseUrl, withKey: false }), a.key)
  return [a, b]
}

describe('POST /v1/pets with Idempotency-Key across instances (postgres)', requiresPostgres(), () => {
  test('When 20 identical requests with one key are spread over two instances, then exactly one pet is created', async (t) => {
    const [a, b] = await twoInstances(t, 'postgres')

    // several rounds, each with its own key, to give a race many chances to show
    for (let round = 0; round < 5; round++) {
      const key = `spread-${round}`
      const body = { ...REX, categoryId: round }
      const answers = await Promise.all(Array.from({ length: 20 }, async (_, i) => postIdempotent(i % 2 === 0 ? a : b, body, key)))

      assertOnePetFromBurst(answers)
      assert.equal(await countPets(a), round + 1)
      const created = answers.find((res) => res.statusCode === 201)!
      assertReplayOf(await postIdempotent(round % 2 === 0 ? b : a, body, key), created)
    }
  })

  test('When one instance created a pet with a key, then the other instance replays it and refuses another body', async (t) => {
    const [a, b] = await twoInstances(t, 'postgres')

    const first = await postIdempotent(a, REX, 'cross')
    const repeat = await postIdempotent(b, REX, 'cross')

    assertCreated(first, REX)
    assertReplayOf(repeat, first)
    assertError(await postIdempotent(b, { ...REX, name: 'Max' }, 'cross'), 'idempotency_key_reused')
    assert.equal(await countPets(b), 1)
  })

  test('When a create is held up in the database, then a repeat meanwhile gets 409 and a retry after it finished gets the replay', async (t) => {
    const app = await buildTestApp(t, { store: 'postgres', env: { DATABASE_TIMEOUT_MS: '10000' } })
    const unlock = await lockPetsTable(t, app.databaseUrl)

    const first = postIdempotent(app, REX, 'held-up')
    await waitUntil('the first request claimed the key', async () => typeof await tokenOf(app, 'held-up') === 'string')
    const repeat = await postIdempotent(app, REX, 'held-up')

    assertError(repeat, 'idempotency_request_in_progress')
    assert.equal(repeat.headers['retry-after'], '1')
    assert.equal(await countPets(app), 0)
    await unlock()
    const created = await first
    assertCreated(created, REX)
    assert.equal(await tokenOf(app, 'held-up'), null)
    assertReplayOf(await postIdempotent(app, REX, 'held-up'), created)
    assert.equal(await countPets(app), 1)
  })

  test('When a held-up create outlives its lease and another request takes over, then only one pet is created and the late request gets 409', async (t) => {
    const clock = manualClock()
    const a = await buildTestApp(t, { store: 'postgres', clock, env: { DATABASE_TIMEOUT_MS: '10000' } })
    const b = asClient(await buildTestApp(t, { databaseUrl: a.databaseUrl, clock, env: { DATABASE_TIMEOUT_MS: '10000' }, withKey: false }), a.key)
    const unlock = await lockPetsTable(t, a.databaseUrl)

    const late = postIdempotent(a, REX, 'slow')
    await waitUntil('the first request claimed the key', async () => typeof await tokenOf(a, 'slow') === 'string')
    const firstToken = await tokenOf(a, 'slow')
    clock.advance(IDEMPOTENCY_LEASE_MS + 1)
    const takeOver = postIdempotent(b, REX, 'slow')
    await waitUntil('the second request took the claim over', async () => {
      const token = await tokenOf(a, 'slow')
      return typeof token === 'string' && token !== firstToken
    })
    await unlock()
    const [lateAnswer, takeOverAnswer] = await Promise.all([late, takeOver])

    assertError(lateAnswer, 'idempotency_request_in_progress', 'took over')
    assert.equal(lateAnswer.headers['retry-after'], '1')
    assertCreated(takeOverAnswer, REX)
    assert.deepEqual((await listAllPets(a)).map((pet) => pet.id), [takeOverAnswer.json().id])
    // the late client's retry gets the pet that was created
    assertReplayOf(await postIdempotent(a, REX, 'slow'), takeOverAnswer)
  })
})

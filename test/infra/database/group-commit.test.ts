import assert from 'node:assert/strict'
import { describe, test, type TestContext } from 'node:test'
import { setImmediate as nextTurn } from 'node:timers/promises'
import pg from 'pg'
import { loadConfig } from '../../../src/infra/config/config.js'
import { StoreUnavailableError } from '../../../src/infra/errors/catalogue.js'
import { petFingerprint } from '../../../src/capabilities/pets/pet-fingerprint.js'
import { IDEMPOTENCY_LEASE_MS, IDEMPOTENCY_TTL_MS } from '../../../src/capabilities/idempotency/policy.js'
import { GroupCommit, type ItemOutcome } from '../../../src/infra/database/group-commit.js'
import { IdempotencyClaimLostError, type IdempotencyClaimRequest, type IdempotencyCompletion } from '../../../src/capabilities/idempotency/claims.js'
import { openDatabase } from '../../../src/infra/database/open-database.js'
import type { Database } from '../../../src/infra/database/database.js'
import { createIdempotencyStore } from '../../../src/capabilities/idempotency/store/create-idempotency-store.js'
import type { IdempotencyStore } from '../../../src/capabilities/idempotency/store/idempotency-store.js'
import { createPetStore } from '../../../src/capabilities/pets/store/create-pet-store.js'
import { systemClock } from '../../../src/infra/runtime/clock.js'
import type { NewPetRecord, PetStore } from '../../../src/capabilities/pets/store/pet-store.js'
import type { Pet, PetStatus } from '../../../src/capabilities/pets/pet-schemas.js'
import { execSql, freshDatabaseUrl, testStores, type StoreKind } from '../../helpers/databases.js'

/** A promise the test settles by hand. */
interface Deferred<T> {
  promise: Promise<T>
  resolve: (value: T) => void
  reject: (error: unknown) => void
}

function deferred<T> (): Deferred<T> {
  let settle!: Pick<Deferred<T>, 'resolve' | 'reject'>
  const promise = new Promise<T>((resolve, reject) => { settle = { resolve, reject } })
  return { promise, ...settle }
}

/** What a promise has come to so far, without waiting for it. */
type Settlement<T> = { state: 'pending' } | { state: 'fulfilled', value: T } | { state: 'rejected', reason: unknown }

function track<T> (promise: Promise<T>): { readonly now: Settlement<T>, done: Promise<void> } {
  let now: Settlement<T> = { state: 'pending' }
  const done = promise.then((value) => { now = { state: 'fulfilled', value } }, (reason: unknown) => { now = { state: 'rejected', reason } })
  return { get now () { return now }, done }
}

/**
 * A writer that records each batch it is given and answers it from `answer` (by default: every
 * item ok, its value the item doubled). With `hold`, each batch waits for the test to let it go.
 */
function recordingWriter (options: { hold?: boolean, answer?: (items: readonly number[]) => Array<ItemOutcome<number>> } = {}) {
  const batches: number[][] = []
  const releases: Array<Deferred<void>> = []
  const arrivals: Array<() => void> = []
  const write = async (items: readonly number[]): Promise<Array<ItemOutcome<number>>> => {
    batches.push([...items])
    arrivals.shift()?.()
    if (options.hold === true) {
      const release = deferred<void>()
      releases.push(release)
      await release.promise
    }
    return options.answer?.(items) ?? items.map((item) => ({ ok: true, value: item * 2 }))
  }
  /** Resolves once the writer has been given `count` batches in all. */
  const batchCount = async (count: number): Promise<void> => {
    while (batches.length < count) await new Promise<void>((resolve) => { arrivals.push(resolve) })
  }
  return { write, batches, releases, batchCount }
}

describe('GroupCommit', () => {
  test('When items are submitted in the same turn, then the writer gets them as one batch, in submission order', async () => {
    const writer = recordingWriter()
    const commits = new GroupCommit(writer.write, 100)

    const results = await Promise.all([1, 2, 3, 4, 5].map(async (item) => await commits.submit(item)))

    assert.deepEqual(writer.batches, [[1, 2, 3, 4, 5]])
    assert.deepEqual(results, [2, 4, 6, 8, 10])
  })

  test('When items are submitted in different turns with no batch being written, then each turn is its own batch', async () => {
    const writer = recordingWriter()
    const commits = new GroupCommit(writer.write, 100)

    const first = commits.submit(1)
    await nextTurn()
    await nextTurn()
    const second = commits.submit(2)

    assert.deepEqual(await Promise.all([first, second]), [2, 4])
    assert.deepEqual(writer.batches, [[1], [2]])
  })

  test('When items are submitted while a batch is being written, then they form the next batch, written only after the first one committed', async () => {
    const writer = recordingWriter({ hold: true })
    const commits = new GroupCommit(writer.write, 100)
    const first = [1, 2].map((item) => track(commits.submit(item)))
    await writer.batchCount(1)

    const second = [3, 4].map((item) => track(commits.submit(item)))
    await nextTurn()
    const third = track(commits.submit(5))
    await nextTurn()
    await nextTurn()

    // nothing is written beside the batch in flight, and nothing settles before its commit
    assert.deepEqual(writer.batches, [[1, 2]])
    assert.ok([...first, ...second, third].every((item) => item.now.state === 'pending'))
    writer.releases[0]?.resolve()
    await Promise.all(first.map((item) => item.done))
    assert.deepEqual(first.map((item) => item.now), [{ state: 'fulfilled', value: 2 }, { state: 'fulfilled', value: 4 }])
    await writer.batchCount(2)
    assert.deepEqual(writer.batches, [[1, 2], [3, 4, 5]])
    assert.ok([...second, third].every((item) => item.now.state === 'pending'), 'the second batch has not committed yet')
    writer.releases[1]?.resolve()
    await Promise.all([...second, third].map((item) => item.done))
    assert.deepEqual([...second, third].map((item) => item.now), [6, 8, 10].map((value) => ({ state: 'fulfilled', value })))
  })

  test('When the writer throws, then every item of that batch is rejected with its error, and later items are still written', async () => {
    const failure = new Error('disk on fire')
    let calls = 0
    const batches: number[][] = []
    const commits = new GroupCommit<number, number>((items) => {
      batches.push([...items])
      calls++
      if (calls === 1) throw failure
      return items.map((item) => ({ ok: true, value: item }))
    }, 100)

    const failed = await Promise.allSettled([commits.submit(1), commits.submit(2)])
    const later = await commits.submit(3)

    assert.deepEqual(failed, [{ status: 'rejected', reason: failure }, { status: 'rejected', reason: failure }])
    assert.equal(later, 3)
    assert.deepEqual(batches, [[1, 2], [3]])
  })

  test('When the writer returns a rejected promise, then that batch is rejected with its reason', async () => {
    const failure = new Error('connection reset')
    const commits = new GroupCommit<number, number>(async () => { throw failure }, 100)

    const outcomes = await Promise.allSettled([commits.submit(1), commits.submit(2)])

    assert.deepEqual(outcomes, [{ status: 'rejected', reason: failure }, { status: 'rejected', reason: failure }])
  })

  test('When a batch fails with an error failsQueued accepts, then the items queued behind it are rejected with that error, unwritten', async () => {
    const unavailable = new StoreUnavailableError('the database is gone')
    const writer = recordingWriter({ hold: true })
    const commits = new GroupCommit(writer.write, 100, (error) => error instanceof StoreUnavailableError)
    const inFlight = [1, 2].map((item) => track(commits.submit(item)))
    await writer.batchCount(1)
    const queued = [3, 4, 5].map((item) => track(commits.submit(item)))
    await nextTurn()

    writer.releases[0]?.reject(unavailable)
    await Promise.all([...inFlight, ...queued].map((item) => item.done))

    for (const item of [...inFlight, ...queued]) assert.deepEqual(item.now, { state: 'rejected', reason: unavailable })
    assert.deepEqual(writer.batches, [[1, 2]], 'the queued items never reached the writer')
    // the queue is not wedged: a later item is written as usual
    const later = track(commits.submit(6))
    await writer.batchCount(2)
    writer.releases[1]?.resolve()
    await later.done
    assert.deepEqual(later.now, { state: 'fulfilled', value: 12 })
  })

  test('When a batch fails with an error failsQueued does not accept, then the items queued behind it are still written', async () => {
    const failure = new Error('a bug')
    const writer = recordingWriter({ hold: true })
    const commits = new GroupCommit(writer.write, 100, (error) => error instanceof StoreUnavailableError)
    const inFlight = track(commits.submit(1))
    await writer.batchCount(1)
    const queued = track(commits.submit(2))
    await nextTurn()

    writer.releases[0]?.reject(failure)
    await inFlight.done
    await writer.batchCount(2)
    writer.releases[1]?.resolve()
    await queued.done

    assert.deepEqual(inFlight.now, { state: 'rejected', reason: failure })
    assert.deepEqual(queued.now, { state: 'fulfilled', value: 4 })
    assert.deepEqual(writer.batches, [[1], [2]])
  })

  test('When the writer reports per-item outcomes, then each caller gets its own value or its own error', async () => {
    const errors = new Map([[2, new Error('two')], [5, new Error('five')]])
    const writer = recordingWriter({
      answer: (items) => items.map((item) => errors.has(item) ? { ok: false, error: errors.get(item) } : { ok: true, value: item * 10 })
    })
    const commits = new GroupCommit(writer.write, 100)

    const outcomes = await Promise.allSettled([1, 2, 3, 4, 5, 6].map(async (item) => await commits.submit(item)))

    assert.deepEqual(writer.batches, [[1, 2, 3, 4, 5, 6]])
    assert.deepEqual(outcomes, [
      { status: 'fulfilled', value: 10 },
      { status: 'rejected', reason: errors.get(2) },
      { status: 'fulfilled', value: 30 },
      { status: 'fulfilled', value: 40 },
      { status: 'rejected', reason: errors.get(5) },
      { status: 'fulfilled', value: 60 }
    ])
  })

  test('When the writer returns fewer outcomes than items, then the items without one are rejected rather than left hanging', async () => {
    const commits = new GroupCommit<number, number>((items) => items.slice(0, 1).map((item) => ({ ok: true, value: item })), 100)

    const outcomes = await Promise.allSettled([commits.submit(1), commits.submit(2)])

    assert.deepEqual(outcomes[0], { status: 'fulfilled', value: 1 })
    assert.equal(outcomes[1]?.status, 'rejected')
  })

  test('When more items are queued than maxBatch, then they are written in batches of at most maxBatch, in order', async () => {
    const writer = recordingWriter()
    const commits = new GroupCommit(writer.write, 3)
    const items = Array.from({ length: 8 }, (_, i) => i + 1)

    const results = await Promise.all(items.map(async (item) => await commits.submit(item)))

    assert.deepEqual(writer.batches, [[1, 2, 3], [4, 5, 6], [7, 8]])
    assert.deepEqual(results, items.map((item) => item * 2))
  })
})

// later than the real clock, so the sweep of expired records never touches these
const T0 = Date.now() + 60 * 60_000
const SCOPE = 'key:1'

/** A migrated store on `databaseUrl` (a fresh database by default), closed when the test ends. */
async function openFresh (t: TestContext, kind: StoreKind, databaseUrl?: string, env: Record<string, string> = {}): Promise<{ store: PetStore, idempotency: IdempotencyStore, database: Database, databaseUrl: string }> {
  const url = databaseUrl ?? await freshDatabaseUrl(t, kind)
  const { database } = await openDatabase(loadConfig({ ...env, DATABASE_URL: url }).database)
  t.after(() => database.close())
  return { store: createPetStore(database, systemClock), idempotency: createIdempotencyStore(database), database, databaseUrl: url }
}

/**
 * Another connection takes a lock that keeps every insert into pets waiting (SQLite: the write
 * lock; PostgreSQL: a SHARE lock on the table), until `release` commits.
 */
async function blockInserts (t: TestContext, databaseUrl: string): Promise<{ release: () => Promise<void> }> {
  if (databaseUrl.startsWith('sqlite:')) {
    const { Database } = await import('../../../src/infra/database/sqlite/driver.js')
    const holder = new Database(databaseUrl.slice('sqlite:'.length), { fileMustExist: true })
    holder.exec('BEGIN IMMEDIATE')
    const release = async (): Promise<void> => { if (holder.open) { holder.exec('COMMIT'); holder.close() } }
    t.after(release)
    return { release }
  }
  const holder = new pg.Client({ connectionString: databaseUrl })
  await holder.connect()
  await holder.query('BEGIN')
  await holder.query('LOCK TABLE pets IN SHARE MODE')
  let released = false
  const release = async (): Promise<void> => {
    if (released) return
    released = true
    await holder.query('COMMIT')
    await holder.end()
  }
  t.after(release)
  return { release }
}

function claimOf (key: string, token: string, pet: NewPetRecord, at = T0): IdempotencyClaimRequest {
  return { scope: SCOPE, key, fingerprint: petFingerprint(pet), token, now: new Date(at), leaseMs: IDEMPOTENCY_LEASE_MS, ttlMs: IDEMPOTENCY_TTL_MS }
}

/** Claims `key` with `token`, then has a later request take it over (the lease ran out): `token` no longer holds it. */
async function claimThenLose (idempotency: IdempotencyStore, key: string, token: string, pet: NewPetRecord): Promise<{ holder: string }> {
  assert.deepEqual(await idempotency.claimIdempotencyKey(claimOf(key, token, pet)), { outcome: 'claimed' })
  const holder = `${token}-successor`
  assert.deepEqual(await idempotency.claimIdempotencyKey(claimOf(key, holder, pet, T0 + IDEMPOTENCY_LEASE_MS)), { outcome: 'claimed' })
  return { holder }
}

async function recordsOf (databaseUrl: string): Promise<Map<string, { token: string | null, status: number | null, body: string | null }>> {
  const rows = await execSql(databaseUrl, 'SELECT key, token, response_status, response_body FROM idempotency_keys WHERE scope = $1', [SCOPE])
  return new Map(rows.map((row) => [String(row.key), {
    token: row.token === null ? null : String(row.token as string),
    status: row.response_status === null ? null : Number(row.response_status),
    body: row.response_body === null ? null : String(row.response_body as string)
  }]))
}

async function allPets (store: PetStore): Promise<Pet[]> {
  const pets: Pet[] = []
  let afterId: number | undefined
  for (;;) {
    const page = await store.listPets({ limit: 100, afterId })
    pets.push(...page.pets)
    if (!page.hasMore) return pets
    afterId = page.pets.at(-1)?.id
  }
}

const STATUSES: readonly PetStatus[] = ['available', 'pending', 'sold']

function newPet (i: number): NewPetRecord {
  return { name: `pet-${i}`, categoryId: i * 7 - 50, status: STATUSES[i % STATUSES.length] as PetStatus }
}

for (const kind of testStores()) {
  describe(`group commit of createPet (${kind})`, () => {
    test('When 100 pets are created at once, then each gets its own id, ascending in submission order, and reads back as returned, also after reopening', async (t) => {
      const { store, database, databaseUrl } = await openFresh(t, kind)
      const wanted = Array.from({ length: 100 }, (_, i) => newPet(i))

      const created = await Promise.all(wanted.map(async (pet) => await store.createPet(pet)))

      assert.deepEqual(created.map(({ id, ...rest }) => rest), wanted)
      assert.equal(new Set(created.map((pet) => pet.id)).size, 100, 'distinct ids')
      for (let i = 1; i < created.length; i++) {
        assert.ok(created[i - 1]!.id < created[i]!.id, `id of create ${i} (${created[i]!.id}) is above that of create ${i - 1} (${created[i - 1]!.id})`)
      }
      for (const pet of created) assert.deepEqual(await store.findPetById(pet.id), pet)
      assert.deepEqual(await allPets(store), created)
      await database.close()
      const reopened = await openFresh(t, kind, databaseUrl)
      assert.deepEqual(await allPets(reopened.store), created)
    })

    test('When a batch mixes plain creates with completions of claims and one claim was taken over, then only that create fails, and only its pet is missing', async (t) => {
      const { store, idempotency, databaseUrl } = await openFresh(t, kind)
      // even: plain creates; odd: each completes a claim of its own; create 5 lost its claim
      const wanted = Array.from({ length: 10 }, (_, i) => newPet(i))
      const completions = new Map<number, IdempotencyCompletion>()
      for (const i of [1, 3, 7, 9]) {
        await idempotency.claimIdempotencyKey(claimOf(`k${i}`, `token-${i}`, wanted[i]!))
        completions.set(i, { scope: SCOPE, key: `k${i}`, token: `token-${i}` })
      }
      const { holder } = await claimThenLose(idempotency, 'k5', 'token-5', wanted[5]!)
      completions.set(5, { scope: SCOPE, key: 'k5', token: 'token-5' })

      const outcomes = await Promise.allSettled(wanted.map(async (pet, i) => await store.createPet(pet, completions.get(i))))

      const lost = outcomes[5]
      assert.ok(lost?.status === 'rejected' && lost.reason instanceof IdempotencyClaimLostError, `create 5: ${JSON.stringify(lost)}`)
      const created = outcomes.flatMap((outcome, i) => {
        if (i === 5) return []
        assert.equal(outcome.status, 'fulfilled', `create ${i}: ${JSON.stringify(outcome)}`)
        return outcome.status === 'fulfilled' ? [outcome.value] : []
      })
      assert.deepEqual(created.map(({ id, ...rest }) => rest), wanted.filter((_, i) => i !== 5))
      for (let i = 1; i < created.length; i++) assert.ok(created[i - 1]!.id < created[i]!.id, 'ids ascend in submission order')
      assert.deepEqual(await allPets(store), created)
      const records = await recordsOf(databaseUrl)
      for (const i of [1, 3, 7, 9]) {
        const pet = created.find((p) => p.name === `pet-${i}`)
        assert.deepEqual(records.get(`k${i}`), { token: null, status: 201, body: JSON.stringify(pet) }, `claim k${i} completed with its pet`)
      }
      assert.deepEqual(records.get('k5'), { token: holder, status: null, body: null }, 'the claim that was taken over is still held by its new holder')
    })

    test('When a batch fails because the store is unavailable, then the creates queued behind it fail with it at once, and none is stored', async (t) => {
      const { store, databaseUrl } = await openFresh(t, kind, undefined, { DATABASE_TIMEOUT_MS: '500' })
      const blocked = await blockInserts(t, databaseUrl)
      // more than one commit holds (256): the rest wait in the queue behind the first batch
      const creates = Array.from({ length: 300 }, (_, i) => store.createPet(newPet(i)))
      // once the first batch has failed, inserts are possible again: a batch written after it would succeed
      const unblocked = Promise.race(creates).catch(async () => { await blocked.release() })

      const outcomes = await Promise.allSettled(creates)
      await unblocked

      const failures = outcomes.map((outcome) => outcome.status === 'rejected' && outcome.reason instanceof StoreUnavailableError)
      assert.equal(failures.filter(Boolean).length, 300, `creates that did not fail with StoreUnavailableError: ${
        outcomes.map((outcome, i) => [i, outcome] as const).filter(([i]) => failures[i] !== true).slice(0, 3).map(([i, outcome]) => `${i}: ${JSON.stringify(outcome)}`).join('; ')}`)
      await blocked.release()
      assert.deepEqual(await allPets(store), [])
      // the store is not wedged
      const pet = await store.createPet(newPet(1))
      assert.deepEqual(await allPets(store), [pet])
    })

    test('When the old and the new holder of one claim both complete it in the same batch, then only the new holder creates a pet', async (t) => {
      const { store, idempotency, databaseUrl } = await openFresh(t, kind)
      const rex: NewPetRecord = { name: 'Rex', categoryId: 1, status: 'available' }
      const { holder } = await claimThenLose(idempotency, 'k', 'token-old', rex)

      const [old, current] = await Promise.allSettled([
        store.createPet(rex, { scope: SCOPE, key: 'k', token: 'token-old' }),
        store.createPet(rex, { scope: SCOPE, key: 'k', token: holder })
      ])

      assert.ok(old?.status === 'rejected' && old.reason instanceof IdempotencyClaimLostError, `the old holder: ${JSON.stringify(old)}`)
      assert.ok(current?.status === 'fulfilled', `the new holder: ${JSON.stringify(current)}`)
      assert.deepEqual(await allPets(store), [current.value])
      assert.deepEqual((await recordsOf(databaseUrl)).get('k'), { token: null, status: 201, body: JSON.stringify(current.value) })
    })
  })
}

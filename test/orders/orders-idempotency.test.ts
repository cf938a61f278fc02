import assert from 'node:assert/strict'
import { describe, test, type TestContext } from 'node:test'
import pg from 'pg'
import { setTimeout as delay } from 'node:timers/promises'
import type { LightMyRequestResponse } from 'fastify'
import { IDEMPOTENCY_LEASE_MS } from '../../src/capabilities/idempotency/policy.js'
import type { Order } from '../../src/capabilities/orders/order-schemas.js'
import type { Pet } from '../../src/capabilities/pets/pet-schemas.js'
import { assertError } from '../helpers/assertions.js'
import { buildTestApp, createdPet, getPet, testStores, type StoreKind, type TestApp, type TestAppOptions } from '../helpers/build-app.js'
import { manualClock } from '../helpers/clock.js'
import { execSql, requiresPostgres } from '../helpers/databases.js'
import { followFeed } from '../helpers/events.js'
import { placeOrder } from './orders-helpers.js'

/** Requests with one key in each round, spread over two instances. */
const SAME_KEY_REQUESTS = 20
const ROUNDS = 5
/** Between one request of a burst's second half and the next: the burst spans about a commit or two (not a timing assertion). */
const STAGGER_MS = 4

/** A second instance on `first`'s database, used by a client holding `first`'s key. */
async function secondInstance (t: TestContext, first: TestApp, options: TestAppOptions = {}): Promise<TestApp> {
  const second = await buildTestApp(t, { ...options, databaseUrl: first.databaseUrl, withKey: false })
  return { ...second, key: first.key, auth: first.auth }
}

/** The record of an Idempotency-Key, read straight from the database (undefined while there is none). */
async function recordOf (api: TestApp, key: string): Promise<{ token: string | null, status: number | null, body: string | null } | undefined> {
  const rows = await execSql(api.databaseUrl, 'SELECT token, response_status, response_body FROM idempotency_keys WHERE key = $1', [key])
  const row = rows[0]
  return row === undefined ? undefined : { token: row.token as string | null, status: row.response_status === null ? null : Number(row.response_status), body: row.response_body as string | null }
}

/** The orders of a pet as stored, in id order. */
async function storedOrdersOf (api: TestApp, petId: number): Promise<Array<[number, string]>> {
  const rows = await execSql(api.databaseUrl, 'SELECT id, status FROM orders WHERE pet_id = $1 ORDER BY id', [petId])
  return rows.map((row) => [Number(row.id), String(row.status)])
}

/** Runs `work` on each item, one after the other. */
async function mapInOrder<T, R> (items: readonly T[], work: (item: T, index: number) => Promise<R>): Promise<R[]> {
  const results: R[] = []
  for (const [index, item] of items.entries()) results.push(await work(item, index))
  return results
}

/**
 * Holds a pet's row from another PostgreSQL connection (`SELECT … FOR UPDATE`) until `release`; `waiters` counts
 * the backends waiting on this connection's locks, so a test can tell when a batch has reached the row.
 */
async function holdPetRow (t: TestContext, databaseUrl: string, petId: number): Promise<{ waiters: () => Promise<number>, release: () => Promise<void> }> {
  const client = new pg.Client({ connectionString: databaseUrl, connectionTimeoutMillis: 5_000 })
  await client.connect()
  let released = false
  const release = async (): Promise<void> => {
    if (released) return
    released = true
    await client.query('ROLLBACK')
    await client.end()
  }
  t.after(release)
  const { rows } = await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')
  const pid = rows[0]?.pid
  await client.query('BEGIN')
  await client.query('SELECT id FROM pets WHERE id = $1 FOR UPDATE', [petId])
  const waiters = async (): Promise<number> => {
    const counted = await execSql(databaseUrl, 'SELECT count(*) AS n FROM pg_stat_activity WHERE $1 = ANY (pg_blocking_pids(pid))', [pid])
    return Number(counted[0]?.n)
  }
  return { waiters, release }
}

/** Polls until `check` holds, or fails after 10 s: a bound against a hang, not a speed. */
async function waitUntil (what: string, check: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + 10_000
  while (!await check()) {
    if (Date.now() > deadline) assert.fail(`timed out waiting until ${what}`)
    await delay(10)
  }
}

/** Asserts the burst placed one order: one original 201, every other 201 its replay, every 409 idempotency_request_in_progress. */
function assertOneOrderFromBurst (answers: readonly LightMyRequestResponse[], petId: number): Order {
  const statuses = answers.map((res) => res.statusCode).join(' ')
  const originals = answers.filter((res) => res.statusCode === 201 && res.headers['idempotent-replayed'] === undefined)
  assert.equal(originals.length, 1, `exactly one answer is the original order: ${statuses}`)
  const original = originals[0] as LightMyRequestResponse
  const order = original.json<Order>()
  assert.equal(order.petId, petId)
  assert.equal(order.status, 'placed')
  assert.equal(original.headers.location, `/v1/store/orders/${order.id}`)
  for (const res of answers) {
    if (res === original) continue
    if (res.statusCode === 201) {
      assert.equal(res.headers['idempotent-replayed'], 'true')
      assert.deepEqual(res.json(), order, 'a replay answers the original order')
      assert.equal(res.headers.location, original.headers.location)
    } else {
      assertError(res, 'idempotency_request_in_progress')
      assert.equal(res.headers['retry-after'], '1')
    }
  }
  return order
}

for (const store of testStores()) {
  describe(`placeOrder with one Idempotency-Key many times at once (${store})`, () => {
    test(`When ${SAME_KEY_REQUESTS} identical orders with one key arrive at two instances, half of them at once and the rest over the next milliseconds (${ROUNDS} rounds), then one order is placed, the others are its replay or 409 idempotency_request_in_progress, and the feed holds one order.created`, async (t) => {
      const a = await buildTestApp(t, { store })
      const b = await secondInstance(t, a)
      const placed: Order[] = []
      let replays = 0
      let inProgress = 0

      for (let round = 0; round < ROUNDS; round++) {
        const pet = await createdPet(a, { name: `Rex ${round}`, categoryId: round })
        const key = `burst-${round}`
        // half at once, the others one every STAGGER_MS after them: those may find the order placed (a replay) rather than in flight (a 409)
        const answers = await Promise.all(Array.from({ length: SAME_KEY_REQUESTS }, async (_, i) => {
          await delay(Math.max(0, i - SAME_KEY_REQUESTS / 2) * STAGGER_MS)
          return await placeOrder(i % 2 === 0 ? a : b, { petId: pet.id }, { 'idempotency-key': key })
        }))

        const order = assertOneOrderFromBurst(answers, pet.id)
        placed.push(order)
        replays += answers.filter((res) => res.headers['idempotent-replayed'] === 'true').length
        inProgress += answers.filter((res) => res.statusCode === 409).length
        assert.deepEqual(await storedOrdersOf(a, pet.id), [[order.id, 'placed']])
        assert.equal((await getPet(a, pet.id)).json<Pet>().status, 'pending')
        assert.deepEqual(await recordOf(a, key), { token: null, status: 201, body: JSON.stringify(order) })
        // a retry once the burst is over gets the replay, on either instance
        const retry = await placeOrder(round % 2 === 0 ? b : a, { petId: pet.id }, { 'idempotency-key': key })
        assert.equal(retry.statusCode, 201, retry.body)
        assert.equal(retry.headers['idempotent-replayed'], 'true')
        assert.deepEqual(retry.json(), order)
      }

      const { events } = await followFeed(a)
      const created = events.flatMap((event) => event.type === 'order.created' ? [event.data.order] : [])
      assert.deepEqual(created, placed, 'one order.created per round, carrying the order answered')
      const moved = events.filter((event) => event.type === 'pet.updated')
      assert.deepEqual(moved.map((event) => event.type === 'pet.updated' ? [event.data.pet.id, event.data.pet.status] : []),
        placed.map((order) => [order.petId, 'pending']), 'one pet.updated per round, making its pet pending')
      t.diagnostic(`${store}: besides the ${ROUNDS} orders placed, ${replays} replays and ${inProgress} answers 409 idempotency_request_in_progress`)
    })
  })
}

describe('placeOrder: a claim lost while its batch waited (postgres)', requiresPostgres(), () => {
  test('When a batch of orders holds a claim that another instance took over while the batch waited, then that order alone is refused 409 and undone, the rest of its batch is placed, and the new holder places it', async (t) => {
    const clock = manualClock()
    // the batches wait on rows this test holds: well within the store's timeout
    const options: TestAppOptions = { store: 'postgres' satisfies StoreKind, clock, env: { DATABASE_TIMEOUT_MS: '10000' } }
    const a = await buildTestApp(t, options)
    const b = await secondInstance(t, a, options)
    // created one after the other: a batch locks its pets in id order, so each waits on its held pet before it locks another
    const [blocker, onB, plain, keyed, contested] = await mapInOrder(['Blocker', 'On B', 'Plain', 'Keyed', 'Contested'],
      async (name, i) => await createdPet(a, { name, categoryId: i }))
    assert.ok(blocker !== undefined && onB !== undefined && plain !== undefined && keyed !== undefined && contested !== undefined)
    // each instance's next batch waits on a pet's row this test holds: A's on `blocker`, B's on `onB`
    const heldBlocker = await holdPetRow(t, a.databaseUrl, blocker.id)
    const heldOnB = await holdPetRow(t, a.databaseUrl, onB.id)

    const blockedOnA = placeOrder(a, { petId: blocker.id })
    await waitUntil('A\'s first batch waits on the held row', async () => await heldBlocker.waiters() === 1)
    // the batch behind it: a plain order, one with its own key, and the one whose claim B takes over
    const plainOnA = placeOrder(a, { petId: plain.id })
    const keyedOnA = placeOrder(a, { petId: keyed.id }, { 'idempotency-key': 'keyed' })
    const lateOnA = placeOrder(a, { petId: contested.id }, { 'idempotency-key': 'contested' })
    await waitUntil('A claimed both keys', async () => typeof (await recordOf(a, 'keyed'))?.token === 'string' && typeof (await recordOf(a, 'contested'))?.token === 'string')
    const firstToken = (await recordOf(a, 'contested'))?.token
    // A's request outlives its lease; B, asked the same, takes the claim over, its placement waiting behind B's held batch
    clock.advance(IDEMPOTENCY_LEASE_MS + 1)
    const blockedOnB = placeOrder(b, { petId: onB.id })
    await waitUntil('B\'s first batch waits on the held row', async () => await heldOnB.waiters() === 1)
    const retryOnB = placeOrder(b, { petId: contested.id }, { 'idempotency-key': 'contested' })
    await waitUntil('B took the claim over', async () => {
      const token = (await recordOf(a, 'contested'))?.token
      return typeof token === 'string' && token !== firstToken
    })
    await heldBlocker.release()
    const [held, plainPlaced, keyedPlaced, late] = await Promise.all([blockedOnA, plainOnA, keyedOnA, lateOnA])
    await heldOnB.release()
    const [heldB, retried] = await Promise.all([blockedOnB, retryOnB])

    assertError(late, 'idempotency_request_in_progress', 'took over')
    assert.equal(late.headers['retry-after'], '1')
    const answered = [held, plainPlaced, keyedPlaced, heldB, retried].map((res) => {
      assert.equal(res.statusCode, 201, res.body)
      assert.equal(res.headers['idempotent-replayed'], undefined)
      return res.json<Order>()
    })
    const [, , keyedOrder, , contestedOrder] = answered
    assert.equal(contestedOrder?.petId, contested.id, 'the new holder placed the contested order')
    // every order stored is one answered 201, once; nothing of A's undone order is left, in the orders or the feed
    const stored = await execSql(a.databaseUrl, 'SELECT id, pet_id, status FROM orders ORDER BY id')
    assert.deepEqual(stored.map((row) => [Number(row.id), Number(row.pet_id), row.status]),
      answered.map((order) => [order.id, order.petId, 'placed']).sort(([x], [y]) => Number(x) - Number(y)))
    const { events } = await followFeed(a)
    const created = events.flatMap((event) => event.type === 'order.created' ? [event.data.order] : [])
    assert.deepEqual([...created].sort((x, y) => x.id - y.id), [...answered].sort((x, y) => x.id - y.id), 'one order.created per order answered')
    assert.equal(events.filter((event) => event.type === 'pet.updated').length, answered.length, 'one pet.updated per order answered')
    assert.deepEqual(await recordOf(a, 'contested'), { token: null, status: 201, body: JSON.stringify(contestedOrder) })
    assert.deepEqual(await recordOf(a, 'keyed'), { token: null, status: 201, body: JSON.stringify(keyedOrder) })
    // A's client retries and gets the order the new holder placed
    const replay = await placeOrder(a, { petId: contested.id }, { 'idempotency-key': 'contested' })
    assert.equal(replay.statusCode, 201, replay.body)
    assert.equal(replay.headers['idempotent-replayed'], 'true')
    assert.deepEqual(replay.json(), contestedOrder)
  })
})

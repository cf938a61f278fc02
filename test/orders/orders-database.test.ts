import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import type { Order } from '../../src/capabilities/orders/order-schemas.js'
import { assertError } from '../helpers/assertions.js'
import { buildTestApp, createdPet, testStores } from '../helpers/build-app.js'
import { execSql, holdPetLocked, requiresPostgres } from '../helpers/databases.js'
import { patchOrder, placeOrder, placedOrder } from './orders-helpers.js'

for (const store of testStores()) {
  describe(`orders: what the database itself holds (${store})`, () => {
    test('When a second open order of a pet is written past the service, then the database refuses it', async (t) => {
      const api = await buildTestApp(t, { store })
      const pet = await createdPet(api, { name: 'Rex', categoryId: 1 })
      await placedOrder(api, pet.id)
      const insert = store === 'sqlite'
        ? "INSERT INTO orders (pet_id, status, placed_at) VALUES ($1, 'approved', 0)"
        : "INSERT INTO orders (pet_id, status, placed_at) VALUES ($1, 'approved', now())"

      await assert.rejects(execSql(api.databaseUrl, insert, [pet.id]), /UNIQUE|unique|duplicate/)
      // a closed order beside it is allowed
      await execSql(api.databaseUrl, insert.replace("'approved'", "'cancelled'"), [pet.id])
    })

    test('When pets change by any statement, even past the service, then the inventory follows exactly', async (t) => {
      const api = await buildTestApp(t, { store })
      for (let i = 0; i < 3; i++) await createdPet(api, { name: `Pet ${i}`, categoryId: 1 })
      await execSql(api.databaseUrl, "UPDATE pets SET status = 'sold' WHERE id <= 2")
      await execSql(api.databaseUrl, 'DELETE FROM pets WHERE id = 3')
      await execSql(api.databaseUrl, "INSERT INTO pets (name, category_id, status) VALUES ('A', 1, 'pending'), ('B', 1, 'available')")

      const res = await api.app.inject({ method: 'GET', url: '/v1/store/inventory', headers: api.auth })

      assert.equal(res.statusCode, 200, res.body)
      assert.deepEqual(res.json(), { available: 1, pending: 1, sold: 2 })
      const counted = await execSql(api.databaseUrl, 'SELECT status, COUNT(*) AS n FROM pets GROUP BY status ORDER BY status')
      assert.deepEqual(counted.map((row) => [row.status, Number(row.n)]), [['available', 1], ['pending', 1], ['sold', 2]])
    })
  })
}

describe('orders on SQLite: a PATCH that writes nothing takes no write lock', () => {
  test('When another process holds the write lock, then PATCHes that change nothing or are refused are answered (200, 404, 409, 412) and record nothing; once it is released, a change is made', async (t) => {
    // a PATCH that waited for the lock would get 503 after SQLite's busy timeout
    const api = await buildTestApp(t, { store: 'sqlite' })
    const pet = await createdPet(api, { name: 'Rex', categoryId: 1 })
    const placed = await placeOrder(api, { petId: pet.id, metadata: { channel: 'web' } })
    assert.equal(placed.statusCode, 201, placed.body)
    const order = placed.json<Order>()
    const orderEvents = async (): Promise<string[]> => (await api.app.inject({ method: 'GET', url: '/v1/events?type=order.updated', headers: api.auth }))
      .json<Array<{ type: string }>>().map((event) => event.type)
    const release = await holdPetLocked(api.databaseUrl, pet.id)
    try {
      for (const body of [{ status: 'placed' }, { metadata: { channel: 'web' } }, {}]) {
        const res = await patchOrder(api, order.id, body)
        assert.equal(res.statusCode, 200, `${JSON.stringify(body)}: ${res.body}`)
        assert.deepEqual(res.json(), order)
        assert.equal(res.headers.etag, placed.headers.etag)
      }
      assertError(await patchOrder(api, order.id + 1, { status: 'approved' }), 'order_not_found', String(order.id + 1))
      assertError(await patchOrder(api, order.id, { status: 'delivered' }), 'invalid_transition', '"delivered"')
      assertError(await patchOrder(api, order.id, { status: 'approved' }, { 'if-match': '"not-its-tag"' }), 'precondition_failed', String(order.id))
    } finally {
      await release()
    }
    assert.deepEqual(await orderEvents(), [])

    const approved = await patchOrder(api, order.id, { status: 'approved' }, { 'if-match': String(placed.headers.etag) })
    assert.equal(approved.statusCode, 200, approved.body)
    assert.equal(approved.json<Order>().status, 'approved')
    assert.deepEqual(await orderEvents(), ['order.updated'])
  })
})

describe('orders on PostgreSQL: two instances on one database', requiresPostgres(), () => {
  test('When twenty orders for one pet arrive at two instances at once, then exactly one is 201 and nineteen are 409 pet_not_available', async (t) => {
    const first = await buildTestApp(t, { store: 'postgres' })
    const second = await buildTestApp(t, { databaseUrl: first.databaseUrl })
    const pet = await createdPet(first, { name: 'Rex', categoryId: 1 })

    const answers = await Promise.all(Array.from({ length: 20 }, async (_, i) => await placeOrder(i % 2 === 0 ? first : second, { petId: pet.id })))

    const placed = answers.filter((res) => res.statusCode === 201)
    assert.equal(placed.length, 1, answers.map((res) => res.statusCode).join(' '))
    for (const res of answers.filter((res) => res.statusCode !== 201)) assertError(res, 'pet_not_available', '"pending"')
    const orders = await execSql(first.databaseUrl, 'SELECT id, status FROM orders')
    assert.deepEqual(orders.map((row) => [Number(row.id), row.status]), [[(placed[0]?.json() as Order).id, 'placed']])
    // the other instance's list pages follow the change (its NOTIFY)
    const listed = async (): Promise<string | undefined> =>
      (await second.app.inject({ method: 'GET', url: '/v1/pets', headers: second.auth })).json<Array<{ status: string }>>()[0]?.status
    const deadline = Date.now() + 5000
    while (await listed() !== 'pending' && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50))
    assert.equal(await listed(), 'pending')
  })
})

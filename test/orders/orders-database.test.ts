import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import type { Order } from '../../src/capabilities/orders/order-schemas.js'
import { assertError } from '../helpers/assertions.js'
import { buildTestApp, createdPet, testStores } from '../helpers/build-app.js'
import { execSql, requiresPostgres } from '../helpers/databases.js'
import { placeOrder, placedOrder } from './orders-helpers.js'

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

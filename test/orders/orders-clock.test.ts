import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import type { Order } from '../../src/capabilities/orders/order-schemas.js'
import { buildTestApp, createdPet, testStores } from '../helpers/build-app.js'
import { manualClock } from '../helpers/clock.js'
import { followFeed } from '../helpers/events.js'
import { patchOrder, placedOrder } from './orders-helpers.js'

const START = Date.parse('2031-03-04T05:06:07.008Z')
const iso = (ms: number): string => new Date(ms).toISOString()

for (const store of testStores()) {
  describe(`the stores' time is the app's clock (${store})`, () => {
    test('When pets and orders change, then each event occurred at the app\'s time of its change, and the order\'s times are it', async (t) => {
      const clock = manualClock(START)
      const api = await buildTestApp(t, { store, clock })

      const pet = await createdPet(api, { name: 'Rex', categoryId: 1 })
      clock.advance(1_000)
      const renamed = await api.app.inject({ method: 'PATCH', url: `/v1/pets/${pet.id}`, headers: { ...api.auth, 'content-type': 'application/merge-patch+json' }, payload: JSON.stringify({ name: 'Max' }) })
      assert.equal(renamed.statusCode, 200, renamed.body)
      clock.advance(1_000)
      const order = await placedOrder(api, pet.id)
      clock.advance(1_000)
      const approved = await patchOrder(api, order.id, { status: 'approved' })
      clock.advance(1_000)
      const delivered = await patchOrder(api, order.id, { status: 'delivered' })

      assert.equal(order.placedAt, iso(START + 2_000))
      assert.equal((approved.json<Order>()).approvedAt, iso(START + 3_000))
      assert.deepEqual(delivered.json<Order>(), { ...approved.json<Order>(), status: 'delivered', deliveredAt: iso(START + 4_000) })
      const { events } = await followFeed(api)
      assert.deepEqual(events.map(({ type, occurredAt }) => `${type} ${occurredAt}`), [
        `pet.created ${iso(START)}`,
        `pet.updated ${iso(START + 1_000)}`,
        `pet.updated ${iso(START + 2_000)}`,
        `order.created ${iso(START + 2_000)}`,
        // approving leaves the pet pending
        `order.updated ${iso(START + 3_000)}`,
        `pet.updated ${iso(START + 4_000)}`,
        `order.updated ${iso(START + 4_000)}`
      ])
    })
  })
}

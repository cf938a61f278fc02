import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { setImmediate } from 'node:timers/promises'
import type { LightMyRequestResponse } from 'fastify'
import type { Order } from '../../src/capabilities/orders/order-schemas.js'
import type { Pet } from '../../src/capabilities/pets/pet-schemas.js'
import { assertError } from '../helpers/assertions.js'
import { buildTestApp, createdPet, getPet, patchPet, testStores } from '../helpers/build-app.js'
import { execSql } from '../helpers/databases.js'
import { type Event, followFeed } from '../helpers/events.js'
import { placeOrder } from './orders-helpers.js'

// updatePet and placeOrder both lock the pet's row and judge it there, so of a PATCH to `sold` and an order
// racing for one available pet exactly one wins: no order slips in on a sold pet, no sale on an ordered one.

/** Rounds of the race, each on a fresh pet: enough for both winners to turn up on either store. */
const ROUNDS = 40

/** How one round ended, as the two answers told it. */
type Winner = 'order' | 'sale'

/** The events of one pet's round: its own pet events and the order events naming it, in feed order. */
function eventsOfPet (events: readonly Event[], petId: number): Event[] {
  return events.filter((event) => event.type === 'pet.created' || event.type === 'pet.updated' ? event.data.pet.id === petId : event.data.order.petId === petId)
}

/** Checks the two answers of a round: exactly one of them succeeded, the other refused as the API documents. */
function winnerOf (pet: Pet, placing: LightMyRequestResponse, selling: LightMyRequestResponse): Winner {
  const round = `pet ${pet.id}: placeOrder ${placing.statusCode} ${placing.body}, PATCH sold ${selling.statusCode} ${selling.body}`
  if (placing.statusCode === 201) {
    assertError(selling, 'pet_has_open_order', '"pending"')
    return 'order'
  }
  assert.equal(selling.statusCode, 200, `neither request succeeded: ${round}`)
  assert.deepEqual(selling.json(), { ...pet, status: 'sold' }, round)
  assertError(placing, 'pet_not_available', '"sold"')
  return 'sale'
}

for (const store of testStores()) {
  describe(`updatePet to sold racing placeOrder (${store})`, () => {
    test(`When a PATCH to sold and an order for one available pet arrive together (${ROUNDS} rounds, a fresh pet each), then exactly one succeeds each time (each side winning some rounds), and the pet, its orders and the feed agree with the winner`, async (t) => {
      const api = await buildTestApp(t, { store })
      const rounds: Array<{ pet: Pet, winner: Winner, order?: Order }> = []

      for (let round = 0; round < ROUNDS; round++) {
        const pet = await createdPet(api, { name: `Race ${round}`, categoryId: round })
        // which request is sent first alternates, and the second follows 0 to 3 turns of the event loop later
        // (an order waits one turn for its batch): so that each side gets its chances to win
        const orderFirst = round % 2 === 0
        const lag = Math.floor(round / 2) % 4
        const first = orderFirst ? placeOrder(api, { petId: pet.id }) : patchPet(api, pet.id, { status: 'sold' })
        for (let turn = 0; turn < lag; turn++) await setImmediate()
        const second = orderFirst ? patchPet(api, pet.id, { status: 'sold' }) : placeOrder(api, { petId: pet.id })
        const [placing, selling] = orderFirst ? await Promise.all([first, second]) : (await Promise.all([first, second])).reverse() as [LightMyRequestResponse, LightMyRequestResponse]
        const winner = winnerOf(pet, placing, selling)
        rounds.push({ pet, winner, ...(winner === 'order' ? { order: placing.json<Order>() } : {}) })
      }

      const { events } = await followFeed(api)
      for (const { pet, winner, order } of rounds) {
        const stored = (await getPet(api, pet.id)).json<Pet>()
        const orders = await execSql(api.databaseUrl, 'SELECT id, status FROM orders WHERE pet_id = $1', [pet.id])
        const types = eventsOfPet(events, pet.id).map((event) => event.type)
        if (winner === 'order') {
          assert.ok(order !== undefined)
          assert.equal(stored.status, 'pending', `pet ${pet.id} was ordered`)
          assert.deepEqual(orders.map((row) => [Number(row.id), row.status]), [[order.id, 'placed']], `pet ${pet.id}: its one order`)
          assert.deepEqual(types, ['pet.created', 'pet.updated', 'order.created'], `pet ${pet.id}: events of the order`)
          assert.deepEqual(eventsOfPet(events, pet.id)[1]?.data, { pet: { ...pet, status: 'pending' }, previous: { status: 'available' } })
        } else {
          assert.equal(stored.status, 'sold', `pet ${pet.id} was sold`)
          assert.deepEqual(orders, [], `pet ${pet.id} was sold, yet has an order`)
          assert.deepEqual(types, ['pet.created', 'pet.updated'], `pet ${pet.id}: events of the sale`)
          assert.deepEqual(eventsOfPet(events, pet.id)[1]?.data, { pet: { ...pet, status: 'sold' }, previous: { status: 'available' } })
        }
      }
      const orders = rounds.filter((round) => round.winner === 'order').length
      const inventory = await api.app.inject({ method: 'GET', url: '/v1/store/inventory', headers: api.auth })
      assert.deepEqual(inventory.json(), { available: 0, pending: orders, sold: ROUNDS - orders })
      t.diagnostic(`${store}: the order won ${orders} rounds, the sale ${ROUNDS - orders}`)
      // a race that one side always won would have proved nothing of the other side's refusal
      assert.ok(orders > 0 && orders < ROUNDS, `one side won every round: the order ${orders} of ${ROUNDS}`)
    })
  })
}

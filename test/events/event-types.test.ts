import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { subjectIdOf } from '../../src/capabilities/events/index.js'
import { buildTestApp, createdPet, patchPet, testStores } from '../helpers/build-app.js'
import { followFeed } from '../helpers/events.js'
import { patchOrder, placedOrder } from '../orders/orders-helpers.js'

for (const store of testStores()) {
  describe(`the registered event types (${store})`, () => {
    test('When each type\'s subject is read from the events the feed holds, then it is the id of the pet or order the change was about', async (t) => {
      const api = await buildTestApp(t, { store })
      const pet = await createdPet(api, { name: 'Rex', categoryId: 1 })
      assert.equal((await patchPet(api, pet.id, { name: 'Rex II' })).statusCode, 200)
      const order = await placedOrder(api, pet.id)
      assert.equal((await patchOrder(api, order.id, { status: 'approved' })).statusCode, 200)

      const { events } = await followFeed(api)

      // every registered type was recorded, each about its own object
      assert.deepEqual([...new Set(events.map(({ type }) => type))].sort(), [...api.app.eventTypes.types].sort())
      for (const event of events) {
        const definition = api.app.eventTypes.definitionOf(event.type)
        assert.ok(definition !== undefined, event.type)
        assert.equal(subjectIdOf(definition, event), definition.subject.name === 'pet' ? pet.id : order.id, event.type)
      }
    })

    test('When each type\'s documented example is read, then its subject id is there and its type is the type\'s', async (t) => {
      const { app } = await buildTestApp(t, { store })

      for (const definition of app.eventTypes.definitions) {
        assert.equal(definition.example.type, definition.type)
        assert.equal(typeof subjectIdOf(definition, definition.example), 'number', definition.type)
        assert.deepEqual((definition.schema.examples as unknown[] | undefined)?.[0], definition.example, `${definition.type}: the schema's example is the one registered`)
      }
    })
  })
}

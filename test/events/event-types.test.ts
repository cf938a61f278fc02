import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { subjectIdOf } from '../../src/capabilities/events/index.js'
import { buildTestApp, createdPet, patchPet, testStores } from '../helpers/build-app.js'
import { followFeed } from '../helpers/events.js'
import { patchOrder, placedOrder } from '../orders/orders-helpers.js'

for (const store of testStores()) {
  describe(`the registered event types (${store})`, () => {
    test('When each type\'s subject is read from the events the feed holds, then it is the id of the pet, order or category the change was about', async (t) => {
      const api = await buildTestApp(t, { store })
      const pet = await createdPet(api, { name: 'Rex', categoryId: 1 })
      assert.equal((await patchPet(api, pet.id, { name: 'Rex II' })).statusCode, 200)
      const order = await placedOrder(api, pet.id)
      assert.equal((await patchOrder(api, order.id, { status: 'approved' })).statusCode, 200)
      const category = -7
      const named = await api.app.inject({ method: 'PUT', url: `/v1/categories/${category}`, headers: { ...api.auth, 'content-type': 'application/json' }, payload: '{"name":"Birds"}' })
      assert.equal(named.statusCode, 201, named.body)

      const { events } = await followFeed(api)

      // every registered type was recorded, each about its own object
      assert.deepEqual([...new Set(events.map(({ type }) => type))].sort(), [...api.app.eventTypes.types].sort())
      for (const event of events) {
        const definition = api.app.eventTypes.definitionOf(event.type)
        assert.ok(definition !== undefined, event.type)
        const subjects: Record<string, number> = { pet: pet.id, order: order.id, category }
        assert.equal(subjectIdOf(definition, event), subjects[definition.subject.name], event.type)
        assert.match(String(subjectIdOf(definition, event)), new RegExp(definition.subject.idPattern ?? '^[1-9][0-9]{0,18}$'), `${event.type}: the subject matches its pattern`)
      }
    })

    test('When the types\' subjects are named in prose, then each once, in registration order, with its article', async (t) => {
      const { app } = await buildTestApp(t, { store })
      assert.equal(app.eventTypes.subjectsProse(), 'a pet, an order or a category')
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

import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { CLI_EVENT_TYPES } from '../../src/capabilities/webhooks/cli-event-types.js'
import { buildTestApp } from '../helpers/build-app.js'

describe('the event types of the webhooks commands', () => {
  test('When the command line lists the event types --events takes, then they are the ones the app registers, in its order', async (t) => {
    const { app } = await buildTestApp(t)
    assert.deepEqual(CLI_EVENT_TYPES, app.eventTypes.types)
    assert.ok(CLI_EVENT_TYPES.length > 0)
  })

  test('When a capability registers an event type after the events capability, then the app refuses it by name', async (t) => {
    const { app } = await buildTestApp(t)
    const [first] = app.eventTypes.definitions
    assert.ok(first !== undefined)
    const late = { ...first, type: 'pet.deleted' }
    assert.throws(() => { app.eventTypes.add({ types: [late] }) }, /event types pet\.deleted come after the events capability/)
  })
})

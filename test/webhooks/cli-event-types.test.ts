import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { buildTestApp } from '../helpers/build-app.js'
import { runCli } from '../helpers/processes.js'

/** The event types a command's usage names (`The event types (--events, comma-separated): a, b.`). */
function eventTypesIn (usage: string): string[] {
  const listed = /^The event types \(--events, comma-separated\): (.+)\.$/m.exec(usage)?.[1]
  assert.ok(listed !== undefined, `no list of event types in:\n${usage}`)
  return listed.split(', ')
}

describe('the event types of the webhooks commands', () => {
  test('When the command line lists the event types --events takes, then they are the ones the app registers, in its order, gathered from the capabilities\' command groups', async (t) => {
    const { app } = await buildTestApp(t)
    const help = await runCli(['webhooks', 'add', '--help'], {})
    assert.equal(help.code, 0, help.stderr)
    assert.deepEqual(eventTypesIn(help.stdout), app.eventTypes.types)
    assert.deepEqual(eventTypesIn((await runCli(['help'], {})).stdout), app.eventTypes.types)
    assert.ok(app.eventTypes.types.length > 0)
  })

  test('When a capability registers an event type after the events capability, then the app refuses it by name', async (t) => {
    const { app } = await buildTestApp(t)
    const [first] = app.eventTypes.definitions
    assert.ok(first !== undefined)
    const late = { ...first, type: 'pet.deleted' }
    assert.throws(() => { app.eventTypes.add({ types: [late] }) }, /event types pet\.deleted come after the events capability/)
  })
})

import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { Database } from '../../src/infra/database/sqlite/driver.js'
import { webhookReceiver } from '../helpers/webhook-receiver.js'
import { buildWebhookApi, recordPet, registered } from '../helpers/webhook-api.js'

// SQLite has one write lock for every process on the file: a `petstore …` command (each takes it at its start) or a
// backup may hold it past the instance's busy timeout (250 ms) just as a delivery's outcome is written. Here another
// connection holds it, as another process would (the lock is the file's, whoever holds it)
const sqliteName = (body: string): string => JSON.parse(body).data.pet.name

describe('webhook delivery while another process holds SQLite\'s write lock', () => {
  test('When the write lock is held for a second as a delivery is answered, then the endpoint is served again within seconds of the lock\'s end, not at its lease\'s end (25 s), and that delivery is made again (at least once)', async (t) => {
    const api = await buildWebhookApi(t, { store: 'sqlite' })
    const receiver = await webhookReceiver(t)
    await registered(api, { url: receiver.url, events: ['pet.created'] })
    await recordPet(api, 'First')
    await receiver.waitFor(1)
    const writer = new Database(api.databaseUrl.slice('sqlite:'.length), { fileMustExist: true })
    t.after(() => { writer.close() })
    let lockEnded: Promise<number> | undefined
    receiver.answer(() => {
      // taken before the answer leaves: the outcome's write and the lease's release find it held
      writer.exec('BEGIN IMMEDIATE')
      lockEnded = new Promise((resolve) => setTimeout(() => { writer.exec('COMMIT'); resolve(Date.now()) }, 1_000))
      return 204
    })
    await recordPet(api, 'Held')
    await receiver.waitFor(2)
    receiver.answer(() => 204)
    const unlockedAt = await lockEnded
    await recordPet(api, 'After')

    const received = await receiver.waitFor(4, 8_000).catch(() => undefined)
    assert.ok(received !== undefined, `the endpoint was not served within 8 s of the lock's end: received ${receiver.received.map(({ body }) => sqliteName(body)).join(', ')}`)
    const names = received.map(({ body }) => sqliteName(body))
    assert.deepEqual(names.slice(0, 2), ['First', 'Held'])
    assert.deepEqual(names.slice(2).sort(), ['After', 'Held'], 'the held delivery, its outcome unwritten, is made again beside the next')
    t.diagnostic(`served again ${Math.max(...received.slice(2).map(({ at }) => at)) - (unlockedAt ?? 0)} ms after the lock's end`)
  })
})

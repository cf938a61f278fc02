import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import type { Event } from '../helpers/events.js'
import { buildTestApp, createdPet } from '../helpers/build-app.js'
import { loadThenKill } from '../helpers/crash-load.js'
import { freshDatabaseUrl, requiresPostgres, testStores } from '../helpers/databases.js'
import { openStream } from '../helpers/event-stream-client.js'
import { bearer, loadEnv, strongApiKey } from '../helpers/live-server.js'
import { serverProcesses } from '../helpers/processes.js'

/** Every event id the feed holds, read page by page over HTTP. */
async function feedIds (baseUrl: string, apiKey: string): Promise<number[]> {
  const ids: number[] = []
  for (let after = 0; ;) {
    const res = await fetch(`${baseUrl}/v1/events?after=${after}&limit=100`, { headers: bearer(apiKey) })
    assert.equal(res.status, 200)
    const page = await res.json() as Event[]
    if (page.length === 0) return ids
    ids.push(...page.map((event) => event.id))
    after = ids.at(-1) as number
  }
}

describe('the stream across instances (postgres)', requiresPostgres(), () => {
  test('When a pet is created on one instance, then a stream on another instance hears it at once', async (t) => {
    const databaseUrl = await freshDatabaseUrl(t, 'postgres')
    const a = await buildTestApp(t, { databaseUrl })
    const b = await buildTestApp(t, { databaseUrl, withKey: false })
    await a.app.listen({ port: 0, host: '127.0.0.1' })
    const stream = await openStream(`http://127.0.0.1:${(a.app.server.address() as { port: number }).port}`, '/v1/events', a.auth)

    const pet = await createdPet({ ...b, key: a.key, auth: a.auth }, { name: 'Rex', categoryId: 1 })
    await stream.waitForMessages(1)

    assert.deepEqual(stream.events()[0]?.data, { pet })
    stream.close()
  })
})

for (const store of testStores()) {
  describe(`the stream through a SIGKILL (${store})`, () => {
    test('When the server is SIGKILLed during a burst of creates, then a consumer resuming with Last-Event-ID on the restarted server misses no event and sees none twice', async (t) => {
      const servers = serverProcesses(t)
      const databaseUrl = await freshDatabaseUrl(t, store)
      const apiKey = strongApiKey()
      const env = loadEnv(databaseUrl, apiKey)
      const first = await servers.start(env)
      const before = await openStream(first.baseUrl, '/v1/events', bearer(apiKey))
      assert.equal(before.status, 200)

      await loadThenKill(first, apiKey, 'stream', false)
      assert.equal(await before.ended, 'cut')
      const seen = before.messages.map((message) => Number(message.id))
      const second = await servers.start(env)
      const feed = await feedIds(second.baseUrl, apiKey)
      const resumed = await openStream(second.baseUrl, '/v1/events', { ...bearer(apiKey), 'last-event-id': String(seen.at(-1) ?? 0) })
      await resumed.waitUntil(() => Number(resumed.messages.at(-1)?.id ?? seen.at(-1) ?? 0) >= (feed.at(-1) ?? 0), 'the resumed stream reaches the newest event')

      const received = [...seen, ...resumed.messages.map((message) => Number(message.id))]
      assert.equal(new Set(received).size, received.length, 'no id twice')
      assert.deepEqual(received, feed, 'every event, in order, once')
      t.diagnostic(`${store}: ${seen.length} events streamed before the kill, ${resumed.messages.length} after the restart`)
      resumed.close()
    })
  })
}

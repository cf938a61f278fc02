import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { buildTestApp, testStores, type TestApp } from '../helpers/build-app.js'
import { natsReader } from '../helpers/buses.js'
import { freshDatabaseUrl } from '../helpers/databases.js'

// A bus configured for the first time starts at the feed's newest event (docs/buses.md): that position must be
// taken before the instance answers, or a create answered before the relay's first look is never published.

async function createPet (api: TestApp, name: string): Promise<void> {
  const res = await api.app.inject({ method: 'POST', url: '/v1/pets', headers: { ...api.auth, 'content-type': 'application/json' }, payload: JSON.stringify({ name, categoryId: 1 }) })
  assert.equal(res.statusCode, 201, res.body)
}

for (const store of testStores()) {
  describe(`a bus configured for the first time (${store})`, { concurrency: true }, () => {
    test('When pets are created the moment the instance is ready, then each is published, and none of those recorded before the bus was configured', async (t) => {
      const databaseUrl = await freshDatabaseUrl(t, store)
      const before = await buildTestApp(t, { databaseUrl })
      await createPet(before, 'before-1')
      await createPet(before, 'before-2')
      await before.app.close()

      const reader = await natsReader(t)
      const api = await buildTestApp(t, { databaseUrl, env: reader.env })
      // no wait: the first request right after ready
      for (const name of ['after-1', 'after-2', 'after-3']) await createPet(api, name)

      await reader.waitFor(3, 15_000)
      await new Promise((resolve) => setTimeout(resolve, 300))
      assert.deepEqual(reader.received.map(({ eventId }) => eventId), ['3', '4', '5'])
    })
  })
}

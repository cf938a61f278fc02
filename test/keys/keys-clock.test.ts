import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { generateApiKey, hashApiKey } from '../../src/capabilities/keys/api-keys.js'
import { createKeyStore } from '../../src/capabilities/keys/store/create-key-store.js'
import { testStores } from '../helpers/build-app.js'
import { manualClock } from '../helpers/clock.js'
import { openStores } from '../helpers/stores.js'

const START = Date.parse('2031-03-04T05:06:07.008Z')
const iso = (ms: number): string => new Date(ms).toISOString()

for (const store of testStores()) {
  describe(`the key store's time is its clock (${store})`, () => {
    test('When the first key and another are created and one is revoked, then their creation and revocation times are the clock\'s at those changes', async (t) => {
      const clock = manualClock(START)
      const keys = createKeyStore((await openStores(t, store)).database, clock)

      const first = await keys.createFirstApiKey('bootstrap', hashApiKey(generateApiKey()))
      clock.advance(1_000)
      const created = await keys.createApiKey('ci', hashApiKey(generateApiKey()), 'read')
      clock.advance(1_000)
      const revoked = await keys.revokeApiKey(created.id)

      assert.equal(first?.name, 'bootstrap', 'a fresh database has no key: the first one is made')
      assert.equal(revoked, true)
      assert.deepEqual((await keys.listApiKeys()).map(({ name, createdAt, revokedAt }) => ({ name, createdAt, revokedAt })), [
        { name: 'bootstrap', createdAt: iso(START), revokedAt: null },
        { name: 'ci', createdAt: iso(START + 1_000), revokedAt: iso(START + 2_000) }
      ])
    })
  })
}

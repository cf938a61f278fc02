import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { generateApiKey, hashApiKey } from '../../src/capabilities/keys/api-keys.js'
import { buildTestApp, testStores } from '../helpers/build-app.js'
import { ApiFuzzer, fuzzHostileRequests, fuzzValidCreates, fuzzValidUpdates } from '../../tools/fuzz/openapi-fuzzer.js'

// seeded and bounded: a few seconds per store (1200 hostile runs: enough that each of the document's operations, HEADs, the five order operations, the ten webhook endpoint operations, the three category operations and the AsyncAPI documents included, is drawn). Longer runs: npm run fuzz -- --runs 5000
const SEED = 4242
const HOSTILE_RUNS = 1200
const VALID_CREATE_RUNS = 50
const VALID_UPDATE_RUNS = 100

// no limit may turn a fuzzed request into a 429: hostile keys from one address count as failed authentications;
// a webhook endpoint the fuzzer registers is tested (and delivered to) at an address that may never answer
const ENV = { RATE_LIMIT_MAX: '0', AUTH_FAILURE_LIMIT: '1000000', WEBHOOK_TIMEOUT_MS: '200' }

for (const store of testStores()) {
  describe(`OpenAPI fuzzing (${store})`, () => {
    test('Given generated valid and hostile requests to every documented operation, then each answer is a documented status with a body of its documented schema, never a 5xx, never leaking internals, and as the catalogue predicts', async (t) => {
      const { app } = await buildTestApp(t, { store, env: ENV })
      // an admin key may call every operation (the webhook endpoints' too): a role below one's would be a 403 before what the fuzzer predicts
      const key = generateApiKey()
      await app.keyStore.createApiKey('fuzz', hashApiKey(key), 'admin')
      const fuzzer = await ApiFuzzer.create(app, key)

      const result = await fuzzHostileRequests(fuzzer, { seed: SEED, numRuns: HOSTILE_RUNS })

      assert.ok(!result.failed, result.report)
      t.diagnostic(`${result.cases} cases, ${fuzzer.stats.requests} requests: ${fuzzer.stats.summary()}`)
      // every operation of the document was exercised, and each one was also answered with success
      const called = [...fuzzer.stats.statuses.keys()]
      assert.deepEqual(fuzzer.api.operations.map((operation) => operation.id).filter((id) => !called.some((key) => key.startsWith(`${id} `))), [], 'operations never called')
      await fuzzer.verifyCatalogue()
    })

    test('Given generated valid creates, then each is 201 with the pet asked for, readable at once and listed exactly as created', async (t) => {
      const { app, key } = await buildTestApp(t, { store, env: ENV })
      const fuzzer = await ApiFuzzer.create(app, key)

      const result = await fuzzValidCreates(fuzzer, { seed: SEED, numRuns: VALID_CREATE_RUNS })

      assert.ok(!result.failed, result.report)
      t.diagnostic(`${result.cases} cases, ${fuzzer.stats.requests} requests: ${fuzzer.stats.summary()}`)
      await fuzzer.verifyCatalogue()
    })

    test('Given generated valid patches of existing pets, then each is 200 or 409 as the lifecycle says, readable at once with its tag, and the status lists follow', async (t) => {
      const { app, key } = await buildTestApp(t, { store, env: ENV })
      const fuzzer = await ApiFuzzer.create(app, key)

      const result = await fuzzValidUpdates(fuzzer, { seed: SEED, numRuns: VALID_UPDATE_RUNS })

      assert.ok(!result.failed, result.report)
      t.diagnostic(`${result.cases} cases, ${fuzzer.stats.requests} requests: ${fuzzer.stats.summary()}`)
      assert.ok((fuzzer.stats.statuses.get('updatePet 409') ?? 0) > 0, 'no patch was refused as a forbidden transition')
      await fuzzer.verifyCatalogue()
    })
  })
}

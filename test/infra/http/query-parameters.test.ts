import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { assertError } from '../../helpers/assertions.js'
import { buildTestApp, listAllPets, postPet, testStores } from '../../helpers/build-app.js'

for (const store of testStores()) {
  describe(`unknown query parameters (${store})`, () => {
    test('When listPets gets status[]=sold, then 400 names "status[]" and lists the known parameters instead of returning the unfiltered list', async (t) => {
      const api = await buildTestApp(t, { store })
      await postPet(api, { name: 'Rex', categoryId: 1, status: 'available' })

      const res = await api.app.inject({ method: 'GET', url: '/v1/pets?status[]=sold', headers: api.auth })

      assertError(res, 'invalid_request', 'query parameter "status[]" is unknown; the known ones are "limit", "status", "cursor"')
    })

    test('When listPets gets a known parameter and a misspelt one, then 400 names the misspelt one', async (t) => {
      const api = await buildTestApp(t, { store })

      const res = await api.app.inject({ method: 'GET', url: '/v1/pets?limit=5&Status=sold', headers: api.auth })

      assertError(res, 'invalid_request', 'query parameter "Status" is unknown')
    })

    for (const [operation, method, url] of [['getPet', 'GET', '/v1/pets/1?verbose=1'], ['createPet', 'POST', '/v1/pets?dryRun=true'], ['getInventory', 'GET', '/v1/store/inventory?page=2']] as const) {
      test(`When ${operation} gets a query parameter, then 400 says it takes none, and nothing is created`, async (t) => {
        const api = await buildTestApp(t, { store })

        const res = await api.app.inject({ method, url, headers: { ...api.auth, 'content-type': 'application/json' }, ...(method === 'POST' ? { payload: '{"name":"Rex","categoryId":1}' } : {}) })

        assertError(res, 'invalid_request', `query parameter "${url.split('?')[1]?.split('=')[0] ?? ''}" is unknown; this operation takes no query parameters`)
        assert.deepEqual(await listAllPets(api), [])
      })
    }

    test('When an unknown query parameter comes without a key, then the answer is 401: authentication comes first', async (t) => {
      const api = await buildTestApp(t, { store })

      assertError(await api.app.inject({ method: 'GET', url: '/v1/pets?status[]=sold' }), 'unauthorized')
    })

    test('When the probes and the documents get query parameters (cache busters), then they ignore them', async (t) => {
      const api = await buildTestApp(t, { store })

      for (const url of ['/healthz?t=1', '/readyz?t=1', '/v1/openapi.json?v=2', '/v1/openapi.yaml?v=2', '/v1/asyncapi.json?v=2', '/v1/asyncapi.yaml?v=2']) {
        assert.equal((await api.app.inject({ method: 'GET', url })).statusCode, 200, url)
      }
    })
  })
}

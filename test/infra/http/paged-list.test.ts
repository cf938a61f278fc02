import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { describe, test } from 'node:test'
import { Type, type TProperties } from '@sinclair/typebox'
import type { LightMyRequestResponse } from 'fastify'
import { SignedPayloads } from '../../../src/infra/credentials/signed-payload.js'
import { PagedList, pagedListQuerySchema } from '../../../src/infra/http/paged-list.js'
import { INT64_MAX, INT64_MIN } from '../../../src/infra/json/int64.js'
import { assertError } from '../../helpers/assertions.js'
import { buildTestApp, createdPet, testStores, type TestApp } from '../../helpers/build-app.js'
import { execSql } from '../../helpers/databases.js'
import { placedOrder } from '../../orders/orders-helpers.js'

// The lists' answers are pinned to the bytes: the Link of each page (its order of parameters and its cursor, the
// payload signed under the store's secret exactly as clients' cursors already in flight were), and every message
// of a refused cursor. Cursors made here the way the service made them before keep working.

const BASE_URL = 'https://api.example.com/v1'

async function signerOf (api: TestApp, setting: string): Promise<SignedPayloads> {
  const [row] = await execSql(api.databaseUrl, 'SELECT value FROM settings WHERE name = $1', [setting])
  assert.ok(row !== undefined, `no ${setting} in the store`)
  return new SignedPayloads(String(row.value))
}

async function get (api: TestApp, url: string): Promise<LightMyRequestResponse> {
  return await api.app.inject({ method: 'GET', url, headers: api.auth })
}

test('When a list\'s query is written for no filter, one or two, then its cursor names the filters it is bound to in a sentence', () => {
  const cursorOf = (filters: TProperties): string => String(pagedListQuerySchema('things', filters).properties.cursor.description)
  const tail = ' cursor that was altered or belongs to another query is rejected with 400 `invalid_cursor`.'

  assert.equal(cursorOf({}), `Opaque position from the \`next\` link of a previous page. A${tail}`)
  assert.equal(cursorOf({ status: Type.String() }), `Opaque position from the \`next\` link of a previous page. Bound to the \`status\` filter it was issued for; a${tail}`)
  assert.equal(cursorOf({ status: Type.String(), petId: Type.String() }),
    `Opaque position from the \`next\` link of a previous page. Bound to the \`status\` and \`petId\` filters it was issued for; a${tail}`)
})

test('When a list pages by any int64 (a category\'s id), then its cursors carry the key exactly, negative or beyond 2^53, and a list of numbers refuses such a key', () => {
  const secret = randomBytes(32).toString('base64url')
  const int64s = new PagedList({ path: '/things', secretSetting: 'things', tag: 't1', filters: {} }, secret)
  const numbers = new PagedList({ path: '/others', secretSetting: 'others', tag: 't1', filters: {} }, secret)

  for (const key of [INT64_MIN, -9007199254740993n, -5, 0, 7, 9007199254740993n, INT64_MAX]) assert.equal(int64s.afterInt64(int64s.cursor(key, {}), {}), key)
  assert.equal(numbers.after(numbers.cursor(7, {}), {}), 7)
  const signer = new SignedPayloads(secret)
  for (const key of ['9007199254740993', '-9223372036854775808']) assert.throws(() => numbers.after(signer.sign(`t1.${key}`), {}), /"cursor" is not a cursor this service issued/, key)
  for (const key of ['9223372036854775808', '-9223372036854775809', '12345678901234567890']) assert.throws(() => int64s.afterInt64(signer.sign(`t1.${key}`), {}), /"cursor" is not a cursor this service issued/, key)
  assert.equal(int64s.nextLink(BASE_URL, 1, {}, -5), `<${BASE_URL}/things?limit=1&cursor=${signer.sign('t1.-5')}>; rel="next"`)
})

for (const store of testStores()) {
  describe(`Paged lists: links and cursors (${store})`, () => {
    test('When listPets has a next page, then its Link is <base/pets?limit&status&cursor>; rel="next", the cursor signing "v1.<last id>.<status>", and a cursor signed so is followed', async (t) => {
      const api = await buildTestApp(t, { store, env: { PUBLIC_BASE_URL: BASE_URL } })
      const pets = [await createdPet(api, { name: 'a', categoryId: 1 }), await createdPet(api, { name: 'b', categoryId: 1, status: 'sold' }),
        await createdPet(api, { name: 'c', categoryId: 1 }), await createdPet(api, { name: 'd', categoryId: 1 })]
      const signer = await signerOf(api, 'cursor_secret')

      const filtered = await get(api, '/v1/pets?status=available&limit=2')
      const unfiltered = await get(api, '/v1/pets?limit=3')
      const followed = await get(api, `/v1/pets?status=available&limit=2&cursor=${signer.sign(`v1.${pets[0]!.id}.available`)}`)

      assert.equal(filtered.headers.link, `<${BASE_URL}/pets?limit=2&status=available&cursor=${signer.sign(`v1.${pets[2]!.id}.available`)}>; rel="next"`)
      assert.equal(unfiltered.headers.link, `<${BASE_URL}/pets?limit=3&cursor=${signer.sign(`v1.${pets[2]!.id}.`)}>; rel="next"`)
      assert.deepEqual(followed.json().map(({ name }: { name: string }) => name), ['c', 'd'])
      assert.equal(followed.headers.link, undefined)
    })

    test('When listOrders has a next page, then its Link is <base/store/orders?limit&status&petId&cursor>; rel="next", the cursor signing "o1.<last id>.<status>.<petId>"', async (t) => {
      const api = await buildTestApp(t, { store, env: { PUBLIC_BASE_URL: BASE_URL } })
      const pets = [await createdPet(api, { name: 'a', categoryId: 1 }), await createdPet(api, { name: 'b', categoryId: 1 })]
      const orders = [await placedOrder(api, pets[0]!.id), await placedOrder(api, pets[1]!.id)]
      const signer = await signerOf(api, 'order_cursor_secret')

      const all = await get(api, '/v1/store/orders?limit=1')
      const filtered = await get(api, `/v1/store/orders?petId=${pets[0]!.id}&status=placed&limit=1`)
      const followed = await get(api, `/v1/store/orders?limit=1&cursor=${signer.sign(`o1.${orders[0]!.id}..`)}`)

      assert.equal(all.headers.link, `<${BASE_URL}/store/orders?limit=1&cursor=${signer.sign(`o1.${orders[0]!.id}..`)}>; rel="next"`)
      assert.equal(filtered.headers.link, undefined, 'the pet has one order')
      assert.deepEqual(followed.json().map(({ id }: { id: number }) => id), [orders[1]!.id])
      const filteredWithMore = await get(api, '/v1/store/orders?status=placed&limit=1')
      assert.equal(filteredWithMore.headers.link, `<${BASE_URL}/store/orders?limit=1&status=placed&cursor=${signer.sign(`o1.${orders[0]!.id}.placed.`)}>; rel="next"`)
    })

    test('When a cursor is not one the list issued or belongs to other filters, then 400 invalid_cursor with the same message as ever', async (t) => {
      const api = await buildTestApp(t, { store })
      const pets = await signerOf(api, 'cursor_secret')
      const orders = await signerOf(api, 'order_cursor_secret')
      const notIssued = 'query parameter "cursor" is not a cursor this service issued'

      const refusals: Array<[string, string]> = [
        ['/v1/pets?cursor=abc.def', notIssued],
        [`/v1/pets?cursor=${orders.sign('v1.1.')}`, notIssued],
        [`/v1/pets?cursor=${pets.sign('v1.1.lost')}`, notIssued],
        [`/v1/pets?cursor=${pets.sign('v1.99999999999999999.')}`, notIssued],
        [`/v1/pets?cursor=${pets.sign('o1.1..')}`, notIssued],
        [`/v1/pets?status=sold&cursor=${pets.sign('v1.1.available')}`, 'query parameter "cursor" belongs to a list with another status filter; keep "status" as in the link that carried it'],
        [`/v1/pets?cursor=${pets.sign('v1.1.available')}`, 'query parameter "cursor" belongs to a list with another status filter; keep "status" as in the link that carried it'],
        ['/v1/store/orders?cursor=abc.def', notIssued],
        [`/v1/store/orders?cursor=${pets.sign('o1.1..')}`, notIssued],
        [`/v1/store/orders?cursor=${orders.sign('o1.1.lost.')}`, notIssued],
        [`/v1/store/orders?petId=2&cursor=${orders.sign('o1.1..1')}`, 'query parameter "cursor" belongs to a list with other filters; keep "status" and "petId" as in the link that carried it'],
        [`/v1/store/orders?cursor=${orders.sign('o1.1.placed.')}`, 'query parameter "cursor" belongs to a list with other filters; keep "status" and "petId" as in the link that carried it']
      ]
      for (const [url, message] of refusals) {
        const body = assertError(await get(api, url), 'invalid_cursor')
        assert.equal(body.message, message, url)
      }
    })
  })
}

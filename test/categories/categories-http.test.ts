import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import type { LightMyRequestResponse } from 'fastify'
import { generateApiKey, hashApiKey } from '../../src/capabilities/keys/api-keys.js'
import { parseJson } from '../../src/infra/json/exact-json.js'
import { assertError } from '../helpers/assertions.js'
import { buildTestApp, createdPet, patchPet, postPet, testStores, type TestApp } from '../helpers/build-app.js'
import { followFeed, nextLinkOf } from '../helpers/events.js'

interface CategoryAnswer { id: number | bigint, name: string | null, pets: { available: number, pending: number, sold: number } }

async function putCategory (api: TestApp, id: number | bigint | string, body: unknown, headers: Record<string, string> = api.auth): Promise<LightMyRequestResponse> {
  return await api.app.inject({ method: 'PUT', url: `/v1/categories/${id}`, headers: { ...headers, 'content-type': 'application/json' }, payload: JSON.stringify(body) })
}

async function getCategory (api: TestApp, id: number | bigint | string, headers: Record<string, string> = {}): Promise<LightMyRequestResponse> {
  return await api.app.inject({ method: 'GET', url: `/v1/categories/${id}`, headers: { ...api.auth, ...headers } })
}

async function listCategories (api: TestApp, url = '/v1/categories'): Promise<LightMyRequestResponse> {
  return await api.app.inject({ method: 'GET', url, headers: api.auth })
}

const counts = (available: number, pending = 0, sold = 0): CategoryAnswer['pets'] => ({ available, pending, sold })

for (const store of testStores()) {
  describe(`categories (${store})`, () => {
    test('When a category is named, then 201 answers it with its pets and ETag, a rename 200, the same name 200 with no new event', async (t) => {
      const api = await buildTestApp(t, { store })
      await createdPet(api, { name: 'Rex', categoryId: 1 })
      await createdPet(api, { name: 'Max', categoryId: 1, status: 'sold' })

      const created = await putCategory(api, 1, { name: 'Dogs' })
      assert.equal(created.statusCode, 201, created.body)
      assert.deepEqual(created.json(), { id: 1, name: 'Dogs', pets: counts(1, 0, 1) })
      assert.match(String(created.headers.etag), /^"[A-Za-z0-9_-]{54}"$/)
      assert.equal(created.headers.etag, (await getCategory(api, 1)).headers.etag, 'the PUT answers the tag a GET gives')

      const renamed = await putCategory(api, 1, { name: 'Hounds' })
      assert.equal(renamed.statusCode, 200, renamed.body)
      assert.deepEqual(renamed.json(), { id: 1, name: 'Hounds', pets: counts(1, 0, 1) })
      const same = await putCategory(api, 1, { name: 'Hounds' })
      assert.equal(same.statusCode, 200, same.body)

      const { events } = await followFeed(api)
      const categoryEvents = events.filter(({ type }) => (type as string) === 'category.updated').map(({ data }) => data)
      assert.deepEqual(categoryEvents, [
        { category: { id: 1, name: 'Dogs' }, previous: { name: null } },
        { category: { id: 1, name: 'Hounds' }, previous: { name: 'Dogs' } }
      ])
      const filtered = await api.app.inject({ method: 'GET', url: '/v1/events?type=category.updated', headers: api.auth })
      assert.equal(filtered.statusCode, 200, filtered.body)
      assert.equal(filtered.json<unknown[]>().length, 2)
    })

    test('When a pet carries a categoryId no category has, then createPet accepts it, and the category answers with name null', async (t) => {
      const api = await buildTestApp(t, { store })
      const res = await postPet(api, { name: 'Tweety', categoryId: 77 })
      assert.equal(res.statusCode, 201, res.body)

      const category = await getCategory(api, 77)
      assert.equal(category.statusCode, 200, category.body)
      assert.deepEqual(category.json(), { id: 77, name: null, pets: counts(1) })
    })

    test('When no pet carries a category and it has no name, then 404 category_not_found', async (t) => {
      const api = await buildTestApp(t, { store })
      assertError(await getCategory(api, 5), 'category_not_found', 'id 5')
      await putCategory(api, 6, { name: 'Cats' })
      assert.deepEqual((await getCategory(api, 6)).json(), { id: 6, name: 'Cats', pets: counts(0) })
    })

    test('When pets move, leave or join a category, then its counts follow, and a conditional GET sees the change of either part', async (t) => {
      const api = await buildTestApp(t, { store })
      const rex = await createdPet(api, { name: 'Rex', categoryId: 3 })
      await putCategory(api, 3, { name: 'Dogs' })
      const first = await getCategory(api, 3)
      const etag = String(first.headers.etag)
      const unchanged = await getCategory(api, 3, { 'if-none-match': etag })
      assert.equal(unchanged.statusCode, 304)
      assert.equal(unchanged.body, '')

      assert.equal((await patchPet(api, rex.id, { status: 'pending' })).statusCode, 200)
      const moved = await getCategory(api, 3, { 'if-none-match': etag })
      assert.equal(moved.statusCode, 200, 'a pet that moved changes the tag')
      assert.deepEqual(moved.json(), { id: 3, name: 'Dogs', pets: counts(0, 1) })
      assert.equal(String(moved.headers.etag).slice(0, 28), etag.slice(0, 28), 'the record\'s part holds while only the pets moved')

      assert.equal((await patchPet(api, rex.id, { categoryId: 4 })).statusCode, 200)
      assert.deepEqual((await getCategory(api, 3)).json(), { id: 3, name: 'Dogs', pets: counts(0) })
      assert.deepEqual((await getCategory(api, 4)).json(), { id: 4, name: null, pets: counts(0, 1) })

      const renamed = await putCategory(api, 3, { name: 'Hounds' })
      assert.notEqual(String(renamed.headers.etag).slice(0, 28), etag.slice(0, 28), 'a rename changes the record\'s part')
      assert.equal((await getCategory(api, 3, { 'if-none-match': etag })).statusCode, 200)
    })

    test('When orders move pets, and many pets are created at once, then the category\'s counts are the pets\' own, as the inventory\'s are', async (t) => {
      const api = await buildTestApp(t, { store })
      const created = await Promise.all(Array.from({ length: 30 }, async (_, n) => await postPet(api, { name: `Pet ${n}`, categoryId: n % 2 === 0 ? 2 : 3 })))
      for (const res of created) assert.equal(res.statusCode, 201, res.body)
      const [first, second] = created.map((res) => res.json<{ id: number, categoryId: number }>()).filter(({ categoryId }) => categoryId === 2)
      assert.ok(first !== undefined && second !== undefined)
      const order = await api.app.inject({ method: 'POST', url: '/v1/store/orders', headers: { ...api.auth, 'content-type': 'application/json' }, payload: JSON.stringify({ petId: first.id }) })
      assert.equal(order.statusCode, 201, order.body)
      const delivered = await api.app.inject({ method: 'POST', url: '/v1/store/orders', headers: { ...api.auth, 'content-type': 'application/json' }, payload: JSON.stringify({ petId: second.id }) })
      const orderId = delivered.json<{ id: number }>().id
      for (const status of ['approved', 'delivered']) {
        const moved = await api.app.inject({ method: 'PATCH', url: `/v1/store/orders/${orderId}`, headers: { ...api.auth, 'content-type': 'application/merge-patch+json' }, payload: JSON.stringify({ status }) })
        assert.equal(moved.statusCode, 200, moved.body)
      }

      const page = await listCategories(api)
      assert.deepEqual(page.json(), [{ id: 2, name: null, pets: counts(13, 1, 1) }, { id: 3, name: null, pets: counts(15) }])
      const inventory = (await api.app.inject({ method: 'GET', url: '/v1/store/inventory', headers: api.auth })).json<CategoryAnswer['pets']>()
      const summed = page.json<CategoryAnswer[]>().reduce((sum, { pets }) => counts(sum.available + pets.available, sum.pending + pets.pending, sum.sold + pets.sold), counts(0))
      assert.deepEqual(summed, inventory)
    })

    test('When categories come from records and from pets, then the list pages through their union in int64 order, each once, with the one paged-list cursor', async (t) => {
      const api = await buildTestApp(t, { store })
      const huge = 2n ** 63n - 1n
      const tiny = -(2n ** 63n)
      for (const categoryId of [5, -3, 9]) await createdPet(api, { name: 'Pet', categoryId })
      const big = await postPet(api, { name: 'Big', categoryId: 0 })
      assert.equal(big.statusCode, 201)
      const hugePet = await api.app.inject({ method: 'POST', url: '/v1/pets', headers: { ...api.auth, 'content-type': 'application/json' }, payload: `{"name":"Huge","categoryId":${huge}}` })
      assert.equal(hugePet.statusCode, 201, hugePet.body)
      for (const [id, name] of [[5, 'Five'], [7, 'Seven'], [tiny, 'Smallest']] as const) assert.ok([200, 201].includes((await putCategory(api, id, { name })).statusCode))

      const seen: CategoryAnswer[] = []
      let url = '/v1/categories?limit=2'
      for (;;) {
        const page = await listCategories(api, url)
        assert.equal(page.statusCode, 200, page.body)
        seen.push(...parseJson(page.body) as CategoryAnswer[])
        if (page.headers.link === undefined) break
        url = nextLinkOf(page)
      }
      assert.deepEqual(seen.map(({ id, name }) => [id, name]), [[tiny, 'Smallest'], [-3, null], [0, null], [5, 'Five'], [7, 'Seven'], [9, null], [huge, null]])
      assert.deepEqual(seen.map(({ pets }) => pets.available), [0, 1, 1, 1, 0, 1, 1])
      const exact = await getCategory(api, huge)
      assert.equal(exact.statusCode, 200, exact.body)
      assert.ok(exact.body.startsWith(`{"id":${huge},"name":null`), exact.body)
    })

    test('When the list is asked with a cursor it did not issue, or a bad limit, then 400 names the parameter', async (t) => {
      const api = await buildTestApp(t, { store })
      assertError(await listCategories(api, '/v1/categories?cursor=abc'), 'invalid_cursor', '"cursor"')
      assertError(await listCategories(api, '/v1/categories?limit=0'), 'invalid_request', '"limit"')
      assertError(await listCategories(api, '/v1/categories?name=x'), 'invalid_request', '"name"')
    })

    test('When a PUT has a bad id or body, then 400 names the field, and nothing is recorded', async (t) => {
      const api = await buildTestApp(t, { store })
      assertError(await putCategory(api, 1, {}), 'invalid_request', '"name"')
      assertError(await putCategory(api, 1, { name: '' }), 'invalid_request', '"name"')
      assertError(await putCategory(api, 1, { name: 'x'.repeat(101) }), 'invalid_request', '"name"')
      assertError(await putCategory(api, 1, { name: '   ' }), 'invalid_request', '"name"')
      assertError(await putCategory(api, 1, { name: 42 }), 'invalid_request', '"name"')
      assertError(await putCategory(api, 1, { name: 'Dogs', id: 1 }), 'invalid_request', '"id"')
      assertError(await putCategory(api, '1.5', { name: 'Dogs' }), 'invalid_request', '"categoryId"')
      assertError(await putCategory(api, '9223372036854775808', { name: 'Dogs' }), 'invalid_request', '"categoryId"')
      assertError(await getCategory(api, 'abc'), 'invalid_request', '"categoryId"')
      const malformed = await api.app.inject({ method: 'PUT', url: '/v1/categories/1', headers: { ...api.auth, 'content-type': 'application/json' }, payload: '{"name":' })
      assertError(malformed, 'malformed_json')
      assert.equal((await putCategory(api, 1, { name: 'x'.repeat(100) })).statusCode, 201, 'a name of 100 characters is accepted')
      const { events } = await followFeed(api)
      assert.equal(events.length, 1)
    })

    test('When a name is another category\'s, then 409 category_name_taken names it, and nothing changes', async (t) => {
      const api = await buildTestApp(t, { store })
      await putCategory(api, 1, { name: 'Dogs' })
      await putCategory(api, 2, { name: 'Cats' })
      assertError(await putCategory(api, 2, { name: 'Dogs' }), 'category_name_taken', 'category 1')
      assertError(await putCategory(api, 3, { name: 'Dogs' }), 'category_name_taken', 'category 1')
      assert.equal((await getCategory(api, 2)).json<CategoryAnswer>().name, 'Cats')
      assertError(await getCategory(api, 3), 'category_not_found')
      assert.equal((await putCategory(api, 1, { name: 'dogs' })).statusCode, 200, 'names are compared exactly')
    })

    test('When ten categories are given one name at once, then one holds it and the others answer 409 category_name_taken', async (t) => {
      const api = await buildTestApp(t, { store })
      const answers = await Promise.all(Array.from({ length: 10 }, async (_, n) => await putCategory(api, n + 1, { name: 'Dogs' })))
      const holders = answers.filter((res) => res.statusCode === 201)
      assert.equal(holders.length, 1, answers.map((res) => res.body).join('\n'))
      for (const res of answers.filter((answer) => answer !== holders[0])) assertError(res, 'category_name_taken')
      assert.equal((await listCategories(api)).json<unknown[]>().length, 1)
    })

    test('When a read key names a category, then 403 insufficient_scope, and a read key may read them', async (t) => {
      const api = await buildTestApp(t, { store })
      const readKey = generateApiKey()
      await api.app.keyStore.createApiKey('reader', hashApiKey(readKey), 'read')
      const reader = { authorization: `Bearer ${readKey}` }
      assertError(await putCategory(api, 1, { name: 'Dogs' }, reader), 'insufficient_scope')
      assert.equal((await putCategory(api, 1, { name: 'Dogs' })).statusCode, 201)
      const read = await api.app.inject({ method: 'GET', url: '/v1/categories/1', headers: reader })
      assert.equal(read.statusCode, 200, read.body)
      const deleted = await api.app.inject({ method: 'DELETE', url: '/v1/categories/1', headers: api.auth })
      assert.equal(deleted.statusCode, 405)
      assert.equal(deleted.headers.allow, 'GET, PUT, HEAD')
    })
  })
}

import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import type { LightMyRequestResponse } from 'fastify'
import type { Pet, PetStatus } from '../../src/capabilities/pets/pet-schemas.js'
import { buildTestApp, postPet, testStores, type TestApp } from '../helpers/build-app.js'
import { assertError } from '../helpers/assertions.js'

const PUBLIC_BASE_URL = 'https://api.example.com/v1'
const STAGING_BASE_URL = 'https://staging.example.com/v1'
const BASE_URLS = { PUBLIC_BASE_URL, STAGING_BASE_URL }

const STATUSES: readonly PetStatus[] = ['available', 'pending', 'sold']

// each case: the raw query string, and what it shows
const INVALID_LIMITS: Array<[string, string]> = [
  ['limit=0', 'below the minimum'],
  ['limit=101', 'above the maximum'],
  ['limit=abc', 'not a number'],
  ['limit=1.5', 'a fraction'],
  ['limit=', 'empty'],
  ['limit=-1', 'negative'],
  ['limit=1&limit=2', 'repeated'],
  ['limit=0x2', 'hexadecimal'],
  ['limit=1e1', 'an exponent'],
  ['limit=2.0', 'a decimal point'],
  ['limit=+2', 'a plus sign'],
  ['limit=%202', 'a leading blank']
]

/** Creates `count` pets one after the other, statuses cycling through the enum. */
async function createPets (api: TestApp, count: number, statuses: readonly PetStatus[] = STATUSES): Promise<Pet[]> {
  const pets: Pet[] = []
  for (let i = 0; i < count; i++) {
    pets.push(await createPet(api, `Pet ${i + 1}`, statuses[i % statuses.length] as PetStatus))
  }
  return pets
}

async function createPet (api: TestApp, name: string, status: PetStatus): Promise<Pet> {
  const res = await postPet(api, { name, categoryId: 1, status })
  assert.equal(res.statusCode, 201, res.body)
  return res.json()
}

async function getPets (api: TestApp, query = '', headers: Record<string, string> = {}): Promise<LightMyRequestResponse> {
  return api.app.inject({ method: 'GET', url: `/v1/pets${query}`, headers: { ...api.auth, ...headers } })
}

interface LinkValue {
  target: string
  rels: string[]
}

const TOKEN = "[!#$%&'*+\\-.^_`|~0-9A-Za-z]+"
const QUOTED = '"(?:[^"\\\\]|\\\\.)*"'
const LINK_VALUE = new RegExp(`\\s*<([^>]*)>((?:\\s*;\\s*${TOKEN}(?:\\s*=\\s*(?:${QUOTED}|${TOKEN}))?)*)\\s*(?:,|$)`, 'y')
const LINK_PARAM = new RegExp(`;\\s*(${TOKEN})(?:\\s*=\\s*(?:"((?:[^"\\\\]|\\\\.)*)"|(${TOKEN})))?`, 'g')

/** Parses a `Link` header (RFC 8288 section 3): its link values with their relation types. */
function parseLinkHeader (header: string): LinkValue[] {
  const links: LinkValue[] = []
  LINK_VALUE.lastIndex = 0
  while (LINK_VALUE.lastIndex < header.length) {
    const match = LINK_VALUE.exec(header)
    if (match === null) assert.fail(`malformed Link header: ${header}`)
    const rels: string[] = []
    for (const param of (match[2] ?? '').matchAll(LINK_PARAM)) {
      if (param[1]?.toLowerCase() !== 'rel') continue
      const value = (param[2] ?? param[3] ?? '').replace(/\\(.)/g, '$1')
      rels.push(...value.split(/\s+/).filter((rel) => rel !== '').map((rel) => rel.toLowerCase()))
    }
    links.push({ target: match[1] as string, rels })
  }
  return links
}

/** The absolute URL of the `rel="next"` link of an answer, if it has one. */
function findNextLink (res: LightMyRequestResponse): URL | undefined {
  const header = res.headers.link
  if (header === undefined) return undefined
  const links = (Array.isArray(header) ? header : [String(header)]).flatMap(parseLinkHeader)
  const next = links.filter((link) => link.rels.includes('next'))
  assert.ok(next.length <= 1, `more than one next link: ${String(header)}`)
  return next[0] === undefined ? undefined : new URL(next[0].target)
}

interface Page {
  pets: Pet[]
  next: URL | undefined
}

/** Follows the `next` links from `firstQuery`; `onPage` runs while each page is fetched. */
async function walkPages (api: TestApp, firstQuery: string, onPage: (index: number) => Promise<unknown> = async () => {}): Promise<Page[]> {
  const pages: Page[] = []
  let url = `/v1/pets${firstQuery}`
  for (;;) {
    assert.ok(pages.length < 1000, 'the walk does not end')
    const [res] = await Promise.all([api.app.inject({ method: 'GET', url, headers: api.auth }), onPage(pages.length)])
    assert.equal(res.statusCode, 200, res.body)
    const page = { pets: res.json<Pet[]>(), next: findNextLink(res) }
    pages.push(page)
    if (page.next === undefined) return pages
    url = `${page.next.pathname}${page.next.search}`
  }
}

function idsOf (pets: readonly Pet[]): number[] {
  return pets.map((pet) => pet.id)
}

function assertNoDuplicates (ids: readonly number[]): void {
  assert.equal(new Set(ids).size, ids.length, `duplicates in ${ids.join(', ')}`)
}

/** Every pet, read in one page (the tests that use it keep the catalogue under 100). */
async function readCatalogue (api: TestApp): Promise<Pet[]> {
  const res = await getPets(api, '?limit=100')
  assert.equal(res.statusCode, 200)
  assert.equal(res.headers.link, undefined)
  return res.json()
}

for (const store of testStores()) {
  describe(`GET /v1/pets (${store})`, () => {
    test('When the catalogue is empty, then the answer is an empty array without a next link', async (t) => {
      const api = await buildTestApp(t, { store })

      const res = await getPets(api)

      assert.equal(res.statusCode, 200)
      assert.match(String(res.headers['content-type']), /^application\/json/)
      assert.deepEqual(res.json(), [])
      assert.equal(res.headers.link, undefined)
    })

    test('When pets exist, then the body is a bare array of them ordered by id ascending', async (t) => {
      const api = await buildTestApp(t, { store })
      const created = await createPets(api, 7)

      const res = await getPets(api)

      assert.equal(res.statusCode, 200)
      const body = res.json()
      assert.ok(Array.isArray(body))
      assert.deepEqual(body, [...created].sort((a, b) => a.id - b.id))
      const ids = idsOf(body)
      assert.deepEqual(ids, [...ids].sort((a, b) => a - b))
      assert.equal(res.headers.link, undefined)
    })

    test('When no limit is given, then 20 pets come back with a next link to the rest', async (t) => {
      const api = await buildTestApp(t, { store })
      const created = await createPets(api, 25)

      const first = await getPets(api)

      assert.equal(first.statusCode, 200)
      assert.deepEqual(first.json(), created.slice(0, 20))
      const next = findNextLink(first)
      assert.ok(next !== undefined, 'expected a rel="next" link')
      const second = await api.app.inject({ method: 'GET', url: `${next.pathname}${next.search}`, headers: api.auth })
      assert.equal(second.statusCode, 200)
      assert.deepEqual(second.json(), created.slice(20))
      assert.equal(findNextLink(second), undefined)
    })

    test('When limit is 1, then exactly one pet comes back with a next link', async (t) => {
      const api = await buildTestApp(t, { store })
      const created = await createPets(api, 3)

      const res = await getPets(api, '?limit=1')

      assert.equal(res.statusCode, 200)
      assert.deepEqual(res.json(), created.slice(0, 1))
      assert.ok(findNextLink(res) !== undefined)
    })

    test('When limit is 100, then up to 100 pets come back in one page', async (t) => {
      const api = await buildTestApp(t, { store })
      const created = await createPets(api, 101)

      const full = await getPets(api, '?limit=100')

      assert.equal(full.statusCode, 200)
      assert.deepEqual(full.json(), created.slice(0, 100))
      const next = findNextLink(full)
      assert.ok(next !== undefined)
      const rest = await api.app.inject({ method: 'GET', url: `${next.pathname}${next.search}`, headers: api.auth })
      assert.deepEqual(rest.json(), created.slice(100))
      assert.equal(findNextLink(rest), undefined)
    })

    for (const [query, what] of INVALID_LIMITS) {
      test(`When limit is ${what} (${query}), then the answer is 400 invalid_request naming "limit"`, async (t) => {
        const api = await buildTestApp(t, { store })
        await createPets(api, 2)

        const res = await getPets(api, `?${query}`)

        assertError(res, 'invalid_request', 'limit')
        assert.equal(res.headers.link, undefined)
      })
    }

    test('When status is given, then only pets with that status come back, in id order', async (t) => {
      const api = await buildTestApp(t, { store })
      const created = await createPets(api, 10, ['available', 'pending', 'sold', 'pending'])

      for (const status of STATUSES) {
        const res = await getPets(api, `?status=${status}`)

        assert.equal(res.statusCode, 200)
        assert.deepEqual(res.json(), created.filter((pet) => pet.status === status), `status=${status}`)
      }
    })

    test('When no pet has the requested status, then the answer is an empty array', async (t) => {
      const api = await buildTestApp(t, { store })
      await createPets(api, 3, ['available'])

      const res = await getPets(api, '?status=sold')

      assert.equal(res.statusCode, 200)
      assert.deepEqual(res.json(), [])
      assert.equal(res.headers.link, undefined)
    })

    test('When status is not in the enum, then the answer is 400 invalid_request naming "status"', async (t) => {
      const api = await buildTestApp(t, { store })
      await createPets(api, 2)

      const res = await getPets(api, '?status=foo')

      assertError(res, 'invalid_request', 'status')
    })

    test('When the next links are followed, then every pet comes back exactly once and the last page has no link', async (t) => {
      const api = await buildTestApp(t, { store })
      const created = await createPets(api, 11)

      const pages = await walkPages(api, '?limit=4')

      assert.deepEqual(pages.map((page) => page.pets.length), [4, 4, 3])
      assert.deepEqual(pages.flatMap((page) => page.pets), created)
      assert.equal(pages.at(-1)?.next, undefined)
    })

    test('When the next links are followed with a status filter, then every pet of that status comes back exactly once', async (t) => {
      const api = await buildTestApp(t, { store })
      const created = await createPets(api, 20, ['pending', 'available', 'pending', 'sold'])
      const pending = created.filter((pet) => pet.status === 'pending')

      const pages = await walkPages(api, '?status=pending&limit=3')

      assert.deepEqual(pages.map((page) => page.pets.length), [3, 3, 3, 1])
      assert.deepEqual(pages.flatMap((page) => page.pets), pending)
      for (const page of pages.slice(0, -1)) assert.equal(page.next?.searchParams.get('status'), 'pending')
      assert.equal(pages.at(-1)?.next, undefined)
    })

    test('When the matching pets fill the last page exactly, then that page has no next link', async (t) => {
      const api = await buildTestApp(t, { store })
      const created = await createPets(api, 6)

      const pages = await walkPages(api, '?limit=3')

      assert.deepEqual(pages.map((page) => page.pets.length), [3, 3])
      assert.deepEqual(pages.flatMap((page) => page.pets), created)
    })

    test('When more pets exist, then the next link starts with the configured public base URL', async (t) => {
      const api = await buildTestApp(t, { store, env: BASE_URLS })
      await createPets(api, 3)

      const res = await getPets(api, '?limit=2')

      const next = findNextLink(res)
      assert.ok(next !== undefined)
      assert.ok(next.href.startsWith(`${PUBLIC_BASE_URL}/pets?`), next.href)
      assert.equal(next.searchParams.get('limit'), '2')
      assert.ok((next.searchParams.get('cursor') ?? '') !== '')
    })

    test('When the request comes through the staging host, then the next link starts with the staging base URL', async (t) => {
      const api = await buildTestApp(t, { store, env: BASE_URLS })
      await createPets(api, 3)

      const res = await getPets(api, '?limit=2', { host: 'staging.example.com' })

      const next = findNextLink(res)
      assert.ok(next !== undefined)
      assert.ok(next.href.startsWith(`${STAGING_BASE_URL}/pets?`), next.href)
    })

    for (const status of [undefined, 'available'] as const) {
      test(`When pets are added during and between page fetches${status === undefined ? '' : ` (status=${status})`}, then every pet that existed at the start comes back exactly once`, async (t) => {
        const api = await buildTestApp(t, { store })
        const initial = (await createPets(api, 15)).filter((pet) => status === undefined || pet.status === status)
        let added = 0
        const addPets = async (count: number): Promise<void> => {
          for (let i = 0; i < count; i++) await createPet(api, `Newcomer ${++added}`, STATUSES[added % STATUSES.length] as PetStatus)
        }

        const seen: number[] = []
        let url = `/v1/pets?limit=2${status === undefined ? '' : `&status=${status}`}`
        let pageIndex = 0
        for (; ; pageIndex++) {
          assert.ok(pageIndex < 100, 'the walk does not end')
          const adding = pageIndex < 6
          // two pets are added while the page is read, one more before the next page
          const [res] = await Promise.all([
            api.app.inject({ method: 'GET', url, headers: api.auth }),
            adding ? Promise.all([addPets(1), addPets(1)]) : undefined
          ])
          if (adding) await addPets(1)
          assert.equal(res.statusCode, 200, res.body)
          seen.push(...idsOf(res.json()))
          const next = findNextLink(res)
          if (next === undefined) break
          url = `${next.pathname}${next.search}`
        }

        assertNoDuplicates(seen)
        assert.deepEqual(seen, [...seen].sort((a, b) => a - b))
        for (const pet of initial) assert.ok(seen.includes(pet.id), `pet ${pet.id} was skipped`)
        assert.ok(pageIndex >= 3, `only ${pageIndex + 1} pages were read`)
      })
    }

    test('When the cursor is garbled, then the answer is 400 invalid_cursor', async (t) => {
      const api = await buildTestApp(t, { store })
      await createPets(api, 3)

      const res = await getPets(api, '?cursor=abc')

      assertError(res, 'invalid_cursor', 'cursor')
    })

    test('When one character of a real cursor\'s payload is changed, then the answer is 400 invalid_cursor', async (t) => {
      const api = await buildTestApp(t, { store })
      await createPets(api, 5)
      const cursor = findNextLink(await getPets(api, '?limit=2'))?.searchParams.get('cursor')
      assert.ok(cursor !== undefined && cursor !== null)
      const forged = `${cursor.startsWith('A') ? 'B' : 'A'}${cursor.slice(1)}`

      const res = await getPets(api, `?limit=2&cursor=${encodeURIComponent(forged)}`)

      assertError(res, 'invalid_cursor', 'cursor')
    })

    test('When a cursor\'s payload is re-encoded with another id and the old tag, then the answer is 400 invalid_cursor', async (t) => {
      const api = await buildTestApp(t, { store })
      const created = await createPets(api, 5)
      const cursor = findNextLink(await getPets(api, '?limit=2'))?.searchParams.get('cursor')
      assert.ok(cursor !== undefined && cursor !== null)
      const [payload, tag] = cursor.split('.')
      const decoded = Buffer.from(payload as string, 'base64url').toString('utf8')
      const lastId = String(created[1]?.id)
      assert.ok(decoded.includes(`.${lastId}.`), `payload "${decoded}" should hold the last id ${lastId}`)
      const forgedPayload = decoded.replace(`.${lastId}.`, `.${Number(lastId) - 1}.`)
      const forged = `${Buffer.from(forgedPayload, 'utf8').toString('base64url')}.${tag as string}`

      const res = await getPets(api, `?limit=2&cursor=${encodeURIComponent(forged)}`)

      assertError(res, 'invalid_cursor', 'cursor')
    })

    test('When a cursor is used with another status filter than it was issued for, then the answer is 400 invalid_cursor', async (t) => {
      const api = await buildTestApp(t, { store })
      await createPets(api, 9)
      const unfiltered = findNextLink(await getPets(api, '?limit=1'))?.searchParams.get('cursor')
      const available = findNextLink(await getPets(api, '?limit=1&status=available'))?.searchParams.get('cursor')
      assert.ok(typeof unfiltered === 'string' && typeof available === 'string')

      const withStatus = await getPets(api, `?limit=1&status=available&cursor=${encodeURIComponent(unfiltered)}`)
      const otherStatus = await getPets(api, `?limit=1&status=pending&cursor=${encodeURIComponent(available)}`)
      const withoutStatus = await getPets(api, `?limit=1&cursor=${encodeURIComponent(available)}`)

      assertError(withStatus, 'invalid_cursor', 'cursor')
      assertError(otherStatus, 'invalid_cursor', 'cursor')
      assertError(withoutStatus, 'invalid_cursor', 'cursor')
    })

    test('When unknown query parameters are sent, then 400 names the first one instead of ignoring it', async (t) => {
      const api = await buildTestApp(t, { store })
      await createPets(api, 5)

      const res = await getPets(api, '?limit=2&status=available&page=3&offset=1')

      assertError(res, 'invalid_request', 'query parameter "page" is unknown')
    })

    test('When list requests are made, accepted or rejected, then the catalogue is unchanged', async (t) => {
      const api = await buildTestApp(t, { store })
      await createPets(api, 8)
      const before = await readCatalogue(api)
      const cursor = findNextLink(await getPets(api, '?limit=3'))?.searchParams.get('cursor')
      assert.ok(typeof cursor === 'string')

      const answers = []
      for (const query of [
        '', '?limit=3', `?limit=3&cursor=${encodeURIComponent(cursor)}`, '?status=sold', '?foo=bar',
        ...INVALID_LIMITS.map(([q]) => `?${q}`), '?status=foo', '?cursor=abc',
        `?status=pending&cursor=${encodeURIComponent(cursor)}`
      ]) {
        answers.push((await getPets(api, query)).statusCode)
      }

      assert.deepEqual(answers, [200, 200, 200, 200, 400, ...INVALID_LIMITS.map(() => 400), 400, 400, 400])
      assert.deepEqual(await readCatalogue(api), before)
    })
  })
}

import assert from 'node:assert/strict'
import { describe, test, type TestContext } from 'node:test'
import { setTimeout as delay } from 'node:timers/promises'
import type { LightMyRequestResponse } from 'fastify'
import { hashApiKey } from '../../src/capabilities/keys/api-keys.js'
import { PAGE_CACHE_MAX_AGE_MS } from '../../src/capabilities/pets/index.js'
import type { Pet, PetStatus } from '../../src/capabilities/pets/pet-schemas.js'
import { loadMigrations } from '../../src/infra/database/migrator.js'
import { assertError } from '../helpers/assertions.js'
import { buildTestApp, listAllPets, patchPet, postPet, type TestApp } from '../helpers/build-app.js'
import { freshDatabaseUrl, requiresPostgres, withPostgres } from '../helpers/databases.js'
import { childEnv, runCli } from '../helpers/processes.js'

// Several service instances on one PostgreSQL database: each TestApp below has its own
// connection pool and its own API key cache, exactly like two processes behind a load balancer.

const STATUSES: readonly PetStatus[] = ['available', 'pending', 'sold']
const KEY = /petstore_[A-Za-z0-9_-]{43}/
/** The documented default of API_KEY_CACHE_SECONDS on PostgreSQL. */
const KEY_CACHE_MS = 5_000
const POLL_INTERVAL_MS = 100

interface Instances {
  databaseUrl: string
  a: TestApp
  b: TestApp
}

/** Two instances on the same fresh schema; both send the key A created, so B authenticates a key it never created. */
// three instances and ten readers in one test process keep its event loop busy: the per-key limit
// and a query answered late because of that load are not what these tests are about
const UNLIMITED = { RATE_LIMIT_MAX: '0', DATABASE_TIMEOUT_MS: '10000' }

async function twoInstances (t: TestContext): Promise<Instances> {
  const databaseUrl = await freshDatabaseUrl(t, 'postgres')
  const a = await buildTestApp(t, { databaseUrl, env: UNLIMITED })
  const b = await buildTestApp(t, { databaseUrl, withKey: false, env: UNLIMITED })
  return { databaseUrl, a, b: { ...b, key: a.key, auth: a.auth } }
}

function bearer (key: string): { authorization: string } {
  return { authorization: `Bearer ${key}` }
}

async function get (api: TestApp, url: string, headers: Record<string, string> = api.auth): Promise<LightMyRequestResponse> {
  return api.app.inject({ method: 'GET', url, headers })
}

async function createPet (api: TestApp, pet: Omit<Pet, 'id'>): Promise<Pet> {
  const res = await postPet(api, pet)
  assert.equal(res.statusCode, 201, res.body)
  return res.json()
}

/** The path and query of the `rel="next"` link, or undefined on the last page. */
function nextLink (res: LightMyRequestResponse): string | undefined {
  const target = /<([^>]+)>;\s*rel="next"/.exec(String(res.headers.link ?? ''))?.[1]
  if (target === undefined) return undefined
  const url = new URL(target)
  return url.pathname + url.search
}

/**
 * Follows `next` links from `firstUrl`, page i sent to `apis[i % apis.length]`;
 * returns every page. Fails on a page that is not 200 or holds more than `limit` pets.
 */
async function walkPages (apis: readonly TestApp[], firstUrl: string, limit: number): Promise<Pet[][]> {
  const pages: Pet[][] = []
  let url: string | undefined = firstUrl
  while (url !== undefined) {
    const api = apis[pages.length % apis.length] as TestApp
    const res = await get(api, url)
    assert.equal(res.statusCode, 200, `page ${pages.length + 1} (${url}): ${res.body}`)
    const page: Pet[] = res.json()
    assert.ok(page.length <= limit, `page ${pages.length + 1} has ${page.length} pets, more than limit=${limit}`)
    pages.push(page)
    url = nextLink(res)
    assert.ok(pages.length <= 1000, 'the next links never end')
  }
  return pages
}

function byId (a: Pet, b: Pet): number {
  return a.id - b.id
}

function ids (pets: readonly Pet[]): number[] {
  return pets.map((pet) => pet.id)
}

const sleep = async (ms: number): Promise<void> => { await new Promise((resolve) => setTimeout(resolve, ms)) }

describe('several instances on one PostgreSQL database (postgres)', requiresPostgres(), () => {
  test('When 100 creates run concurrently through each of two instances, then all get 201 with 200 distinct ids and each pet reads back through the other instance as created', async (t) => {
    const { a, b } = await twoInstances(t)
    const perInstance = 100
    const requests: Array<Promise<{ via: 'A' | 'B', body: Omit<Pet, 'id'>, res: LightMyRequestResponse }>> = []
    for (let i = 0; i < perInstance; i++) {
      // interleaved: A, B, A, B… all in flight at once
      for (const [via, api] of [['A', a], ['B', b]] as const) {
        const body = { name: `${via} pet ${i}`, categoryId: i, status: STATUSES[i % STATUSES.length] as PetStatus }
        requests.push(postPet(api, body).then((res) => ({ via, body, res })))
      }
    }

    const results = await Promise.all(requests)

    const failed = results.filter(({ res }) => res.statusCode !== 201)
    assert.deepEqual(failed.map(({ via, res }) => `${via}: ${res.statusCode} ${res.body}`), [], 'every create answers 201')
    const created = results.map(({ via, body, res }) => ({ via, body, res, pet: res.json<Pet>() }))
    for (const { body, res, pet } of created) {
      assert.ok(Number.isSafeInteger(pet.id) && pet.id > 0, `id ${String(pet.id)}`)
      assert.deepEqual(pet, { id: pet.id, ...body })
      assert.equal(res.headers.location, `/v1/pets/${pet.id}`)
    }
    const distinct = new Set(created.map(({ pet }) => pet.id))
    assert.equal(distinct.size, 2 * perInstance, 'the two instances never hand out the same id')

    const reads = await Promise.all(created.map(async ({ via, pet }) => ({ pet, res: await get(via === 'A' ? b : a, `/v1/pets/${pet.id}`) })))
    for (const { pet, res } of reads) {
      assert.equal(res.statusCode, 200, `GET /v1/pets/${pet.id} through the other instance: ${res.body}`)
      assert.deepEqual(res.json(), pet)
    }
    const everything = created.map(({ pet }) => pet).sort(byId)
    assert.deepEqual(await listAllPets(a), everything)
    assert.deepEqual(await listAllPets(b), everything)
  })

  test('When pets are created through A, then B lists them, its next links walk every pet exactly once in id order, and cursors issued by A are accepted by B', async (t) => {
    const { a, b } = await twoInstances(t)
    const created: Pet[] = []
    for (let i = 0; i < 45; i++) {
      created.push(await createPet(a, { name: `Pet ${i}`, categoryId: i % 4, status: STATUSES[i % STATUSES.length] as PetStatus }))
    }
    const limit = 7

    const first = await get(b, '/v1/pets?limit=100')
    assert.equal(first.statusCode, 200, first.body)
    assert.deepEqual(first.json(), created, 'B lists what A created, in id order')

    const pages = await walkPages([b], `/v1/pets?limit=${limit}`, limit)
    assert.deepEqual(pages.map((page) => page.length), [7, 7, 7, 7, 7, 7, 3])
    assert.deepEqual(pages.flat(), created, 'every pet exactly once, in id order')

    // page 1 from A, page 2 from B with A's cursor, and so on: the cursor secret is shared through the store
    const alternating = await walkPages([a, b], `/v1/pets?limit=${limit}`, limit)
    assert.deepEqual(alternating.flat(), created)
    const fromA = nextLink(await get(a, `/v1/pets?limit=${limit}`))
    assert.ok(fromA !== undefined, 'A links to a second page')
    const secondViaB = await get(b, fromA)
    assert.equal(secondViaB.statusCode, 200, `B rejected the cursor A issued: ${secondViaB.body}`)
    assert.deepEqual(secondViaB.json(), created.slice(limit, 2 * limit))
    const fromB = nextLink(await get(b, `/v1/pets?limit=${limit}`))
    assert.ok(fromB !== undefined)
    assert.equal(fromB, fromA, 'both instances issue the same cursor for the same position')

    for (const status of STATUSES) {
      const matching = created.filter((pet) => pet.status === status)
      const statusPages = await walkPages([a, b], `/v1/pets?status=${status}&limit=4`, 4)
      assert.deepEqual(statusPages.flat(), matching, `status=${status}, pages alternating between A and B`)
      assert.ok(statusPages.length > 2, `status=${status} spans several pages`)
    }
    // a cursor from A's filtered list is still bound to its filter on B
    const soldFromA = nextLink(await get(a, '/v1/pets?status=sold&limit=4'))
    assert.ok(soldFromA !== undefined)
    const cursor = new URLSearchParams(soldFromA.split('?')[1]).get('cursor') ?? ''
    assertError(await get(b, `/v1/pets?status=available&limit=4&cursor=${encodeURIComponent(cursor)}`), 'invalid_cursor')
    assertError(await get(b, `/v1/pets?limit=4&cursor=${encodeURIComponent(cursor)}`), 'invalid_cursor')
  })

  test('When a pet is changed through A, then B reads the new pet and its new ETag at once, and refuses the old tag with 412', async (t) => {
    const { a, b } = await twoInstances(t)
    const pet = await createPet(a, { name: 'Rex', categoryId: 3, status: 'available' })
    const oldTag = String((await get(b, `/v1/pets/${pet.id}`)).headers.etag)

    const changed = await patchPet(a, pet.id, { status: 'pending' }, { 'if-match': oldTag })
    assert.equal(changed.statusCode, 200, changed.body)

    const read = await get(b, `/v1/pets/${pet.id}`)
    assert.deepEqual(read.json(), { ...pet, status: 'pending' })
    assert.equal(read.headers.etag, changed.headers.etag)
    assertError(await patchPet(b, pet.id, { status: 'sold' }, { 'if-match': oldTag }), 'precondition_failed')
    const again = await patchPet(b, pet.id, { status: 'available' }, { 'if-match': String(changed.headers.etag) })
    assert.equal(again.statusCode, 200, again.body)
  })

  test('When 20 PATCHes with one tag race through two instances, then exactly one is 200, the others 412, and both read the winner\'s pet', async (t) => {
    const { a, b } = await twoInstances(t)
    const pet = await createPet(a, { name: 'Rex', categoryId: 3, status: 'available' })
    const tag = String((await get(a, `/v1/pets/${pet.id}`)).headers.etag)

    const conditional = await Promise.all(Array.from({ length: 20 }, async (_, i) => patchPet(i % 2 === 0 ? a : b, pet.id, { name: `Editor ${i}` }, { 'if-match': tag })))

    const won = conditional.filter((res) => res.statusCode === 200)
    assert.equal(won.length, 1, conditional.map((res) => res.statusCode).join(', '))
    for (const res of conditional.filter((other) => other !== won[0])) assertError(res, 'precondition_failed')
    assert.deepEqual((await get(a, `/v1/pets/${pet.id}`)).json(), won[0]?.json())
    assert.deepEqual((await get(b, `/v1/pets/${pet.id}`)).json(), won[0]?.json())
  })

  test('When a key is revoked through the CLI, then it stops working on both instances within the documented 5 s', async (t) => {
    const { databaseUrl, a, b } = await twoInstances(t)
    // the documented default is what is tested: the instances must not set API_KEY_CACHE_SECONDS
    assert.equal(a.config.apiKeyCacheMs, KEY_CACHE_MS)
    assert.equal(b.config.apiKeyCacheMs, KEY_CACHE_MS)
    const cliEnv = childEnv({ DATABASE_URL: databaseUrl, LOG_LEVEL: 'silent' })
    const created = await runCli(['keys', 'create', '--name', 'shared'], cliEnv)
    assert.equal(created.code, 0, created.stderr)
    const key = KEY.exec(created.stdout)?.[0]
    const id = /API key (\d+)/.exec(created.stdout)?.[1]
    assert.ok(key !== undefined && id !== undefined, `no key or id in:\n${created.stdout}`)
    const instances = [{ name: 'A', api: a }, { name: 'B', api: b }] as const
    // both instances look the key up, and so cache it
    const lookedUpAt = new Map<string, number>()
    for (const { name, api } of instances) {
      const res = await get(api, '/v1/pets', bearer(key))
      assert.equal(res.statusCode, 200, `${name} before the revocation: ${res.body}`)
      lookedUpAt.set(name, Date.now())
    }

    const revokeStartedAt = Date.now()
    const revoked = await runCli(['keys', 'revoke', id], cliEnv)
    const revokedAt = Date.now()
    assert.equal(revoked.code, 0, revoked.stderr)
    assert.match(revoked.stdout, new RegExp(`Revoked API key ${id}\\b`))

    // poll both until each has answered 401 for a second; give up well after the bound so a miss reports its delay
    const answers = new Map<string, Array<{ startedAt: number, at: number, res: LightMyRequestResponse }>>(instances.map(({ name }) => [name, []]))
    const firstRejection = (name: string): number | undefined => answers.get(name)?.find(({ res }) => res.statusCode === 401)?.at
    const settled = (): boolean => instances.every(({ name }) => {
      const rejectedAt = firstRejection(name)
      return rejectedAt !== undefined && Date.now() - rejectedAt >= 1_000
    })
    const giveUpAt = revokedAt + 2 * KEY_CACHE_MS
    while (!settled() && Date.now() < giveUpAt) {
      await Promise.all(instances.map(async ({ name, api }) => {
        const startedAt = Date.now()
        const res = await get(api, '/v1/pets', bearer(key))
        answers.get(name)?.push({ startedAt, at: Date.now(), res })
      }))
      await sleep(POLL_INTERVAL_MS)
    }

    const delays = Object.fromEntries(instances.map(({ name }) => {
      const rejectedAt = firstRejection(name)
      return [name, rejectedAt === undefined ? `still accepted after ${Date.now() - revokedAt} ms` : rejectedAt - revokedAt]
    }))
    const sinceLookUp = instances.map(({ name }) => `${name} ${String((firstRejection(name) ?? NaN) - (lookedUpAt.get(name) ?? NaN))} ms`).join(', ')
    t.diagnostic(`401 after the revocation finished: A ${String(delays.A)} ms, B ${String(delays.B)} ms; ` +
      `after the cached look-up: ${sinceLookUp}; the revoke command took ${revokedAt - revokeStartedAt} ms`)
    for (const { name } of instances) {
      const delay = delays[name]
      assert.ok(typeof delay === 'number', `instance ${name} never rejected the revoked key; measured: A ${String(delays.A)} ms, B ${String(delays.B)} ms`)
      const seen = answers.get(name) ?? []
      // the documented bound, whatever the machine's load: a cached key ages from before its look-up, made before the
      // revocation, so no request begun more than KEY_CACHE_MS after the revocation finished may be served with it
      const servedLate = seen.filter(({ startedAt, res }) => startedAt - revokedAt > KEY_CACHE_MS && res.statusCode !== 401)
      assert.deepEqual(servedLate.map(({ startedAt, res }) => `${res.statusCode} to a request begun ${startedAt - revokedAt} ms after the revocation`), [],
        `instance ${name} must reject the revoked key within ${KEY_CACHE_MS} ms of the revocation; first 401: A ${String(delays.A)} ms, B ${String(delays.B)} ms`)
      const statuses = seen.map(({ res }) => res.statusCode)
      const firstRejected = statuses.indexOf(401)
      assert.deepEqual(statuses.slice(0, firstRejected), statuses.slice(0, firstRejected).map(() => 200), `${name} answered ${statuses.join(',')}`)
      assert.deepEqual(statuses.slice(firstRejected), statuses.slice(firstRejected).map(() => 401),
        `once ${name} rejected the key it must keep rejecting it; answered ${statuses.join(',')}`)
      for (const { res } of seen.slice(firstRejected)) assertError(res, 'unauthorized', 'revoked')
    }
    // and still later, on both
    for (const { name, api } of instances) {
      assert.equal((await get(api, '/v1/pets', bearer(key))).statusCode, 401, `${name} accepted the revoked key again`)
      assert.equal((await get(api, '/v1/pets')).statusCode, 200, `${name} still accepts the key that was not revoked`)
    }
  })

  test('When two instances start at once on an empty schema, then the schema is migrated exactly once and both serve requests', async (t) => {
    const databaseUrl = await freshDatabaseUrl(t, 'postgres')
    const tablesBefore = await withPostgres(async (client) =>
      (await client.query('SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema()')).rows, databaseUrl)
    assert.deepEqual(tablesBefore, [], 'the schema starts empty')

    const [a, b] = await Promise.all([
      buildTestApp(t, { databaseUrl, withKey: false }),
      buildTestApp(t, { databaseUrl, withKey: false })
    ])

    const migrations = await withPostgres(async (client) =>
      (await client.query<{ version: number, name: string }>('SELECT version, name FROM schema_migrations ORDER BY version, name')).rows, databaseUrl)
    assert.deepEqual(migrations, loadMigrations('postgres').map(({ version, name }) => ({ version, name })),
      'each migration is recorded exactly once')
    const secrets = await withPostgres(async (client) =>
      (await client.query<{ count: string }>("SELECT count(*)::text AS count FROM settings WHERE name = 'cursor_secret'")).rows, databaseUrl)
    assert.deepEqual(secrets, [{ count: '1' }], 'one cursor secret for both instances')

    const key = 'petstore_multi-instance-start-key'
    await a.app.keyStore.createApiKey('shared', hashApiKey(key))
    const apiA = { ...a, key, auth: bearer(key) }
    const apiB = { ...b, key, auth: bearer(key) }
    const pets: Pet[] = []
    for (let i = 0; i < 5; i++) pets.push(await createPet(i % 2 === 0 ? apiA : apiB, { name: `Pet ${i}`, categoryId: 1, status: 'available' }))
    assert.deepEqual(ids(pets), [...ids(pets)].sort((x, y) => x - y), 'ids follow creation order')
    for (const api of [apiA, apiB]) {
      assert.deepEqual((await get(api, '/v1/pets?limit=100')).json(), pets)
      assert.equal((await api.app.inject({ method: 'GET', url: '/healthz' })).statusCode, 200)
    }
    assert.deepEqual((await walkPages([apiA, apiB], '/v1/pets?limit=2', 2)).flat(), pets, 'the instances share one cursor secret')
  })

  test('When pets are created concurrently through six instances while readers list the whole catalogue, then every list seen is a prefix of the final list', async (t) => {
    const { a, b } = await twoInstances(t)
    // a third instance only reads, so its pool is free to sample many snapshots; B also reads while it writes
    const c = { ...await buildTestApp(t, { databaseUrl: a.databaseUrl, withKey: false, env: UNLIMITED }), key: a.key, auth: a.auth }
    // each instance commits one group at a time: four more writing instances make more commits race
    const more = await Promise.all(Array.from({ length: 4 }, async () =>
      ({ ...await buildTestApp(t, { databaseUrl: a.databaseUrl, withKey: false, env: UNLIMITED }), key: a.key, auth: a.auth })))
    const writerApps: TestApp[] = [a, b, ...more]
    const perRound = 96
    const everything: Pet[] = []
    // one round per status, each listed through its own filter on a single page: three chances to catch an id committed out of order
    for (const status of STATUSES) {
      let writing = true
      const seen: number[][] = []
      const read = async (api: TestApp): Promise<void> => {
        // at least one list after the last write, so the final state is among those checked; that one
        // waits out the page cache's bound, since another instance may not have heard of the last commit yet
        for (let last = false; !last;) {
          last = !writing
          if (last) await delay(PAGE_CACHE_MAX_AGE_MS)
          const res = await get(api, `/v1/pets?status=${status}&limit=${perRound}`)
          assert.equal(res.statusCode, 200, res.body)
          seen.push(ids(res.json()))
          // most lists come from the page cache at once: sample over time instead of spinning
          await delay(1)
        }
      }
      const readers = Promise.all([b, b, c, c, c, c, c, c, c, c].map(read))
      // 10 writers, each creating one pet after another: concurrent creates arrive together in group
      // commits, so sequential lanes make many commits (states for the readers to catch), not two
      const lanes = 12
      const writers = Array.from({ length: lanes }, async (_, lane) => {
        const pets: Pet[] = []
        for (let i = lane; i < perRound; i += lanes) {
          pets.push(await createPet(writerApps[lane % writerApps.length] as TestApp, { name: `Pet ${status} ${i}`, categoryId: i, status }))
        }
        return pets
      })
      let created: Pet[]
      try {
        created = (await Promise.all(writers)).flat()
      } finally {
        writing = false
        await readers
      }

      everything.push(...created)
      const final = ids(created.sort(byId))
      const partial = seen.filter((list) => list.length > 0 && list.length < perRound).length
      t.diagnostic(`status=${status}: ${seen.length} lists seen while writing, ${partial} of them partial`)
      for (const list of seen) {
        const at = list.findIndex((id, index) => id !== final[index])
        assert.deepEqual(list, final.slice(0, list.length),
          `status=${status}: a list of ${list.length} pets is not a prefix of the final list: at position ${at} it shows id ${String(list[at])} ` +
          `where the final list has id ${String(final[at])}, i.e. a pet was visible before one with a lower id`)
      }
      assert.deepEqual(seen.at(-1), final)
    }
    assert.deepEqual((await listAllPets(b)).map((pet) => pet.id), ids(everything.sort(byId)))
  })
})

import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import type { LightMyRequestResponse } from 'fastify'
import { isAllowedTransition } from '../../src/capabilities/pets/status-transitions.js'
import type { Pet, PetStatus } from '../../src/capabilities/pets/pet-schemas.js'
import { assertError } from '../helpers/assertions.js'
import { buildTestApp, createdPet, getPet, listAllPets, patchPet, testStores, type TestApp } from '../helpers/build-app.js'

// many requests in flight at once in one test process: neither the per-key limit nor a query answered
// late because of that load is what these tests are about
const UNLIMITED = { RATE_LIMIT_MAX: '0', DATABASE_TIMEOUT_MS: '10000' }

async function listPage (api: TestApp, url: string): Promise<{ pets: Pet[], next: string | undefined }> {
  const res = await api.app.inject({ method: 'GET', url, headers: api.auth })
  assert.equal(res.statusCode, 200, res.body)
  const target = /<([^>]+)>;\s*rel="next"/.exec(String(res.headers.link ?? ''))?.[1]
  return { pets: res.json(), next: target === undefined ? undefined : new URL(target).pathname + new URL(target).search }
}

async function listedIds (api: TestApp, status: PetStatus): Promise<number[]> {
  return (await listPage(api, `/v1/pets?limit=100&status=${status}`)).pets.map((pet) => pet.id)
}

/**
 * Whether the 200 answers, taken in some order, lead from `start` to `final` with every refusal
 * explained: each answer is the pet after one accepted patch, and a 409 is only possible once a
 * status that forbids the asked one was reached.
 */
function reachableBySomeSerialOrder (start: Pet, patches: ReadonlyArray<{ status: PetStatus }>, answers: readonly LightMyRequestResponse[], final: Pet): string | undefined {
  const accepted = answers.flatMap((res, i) => res.statusCode === 200 ? [{ i, pet: res.json<Pet>() }] : [])
  const refused = answers.flatMap((res, i) => res.statusCode === 409 ? [i] : [])
  const other = answers.filter((res) => res.statusCode !== 200 && res.statusCode !== 409)
  if (other.length > 0) return `unexpected answers: ${other.map((res) => `${res.statusCode} ${res.body}`).join('; ')}`
  // the last accepted patch is the pet as it ends
  const last = accepted.find(({ pet }) => JSON.stringify(pet) === JSON.stringify(final))
  if (last === undefined) return `the final pet ${JSON.stringify(final)} is no accepted patch's answer`
  // in a serial order, the statuses the accepted patches left form a chain of allowed moves ending in the last one;
  // with sold final, that is: every non-sold acceptance before every sold one
  const order = [...accepted.filter(({ pet }) => pet.status !== 'sold'), ...accepted.filter(({ pet }) => pet.status === 'sold')]
  if (order.at(-1)?.pet.status !== final.status) return `the pet ends ${final.status}, but ${order.at(-1)?.pet.status ?? 'nothing'} is where the accepted patches lead`
  let status = start.status
  for (const { i, pet } of order) {
    if (!isAllowedTransition(status, pet.status)) return `patch ${i} moved ${status} → ${pet.status}`
    status = pet.status
  }
  // a refusal needs a state that forbids its target: only sold forbids anything, and it is final
  for (const i of refused) {
    const target = patches[i]?.status as PetStatus
    if (!accepted.some(({ pet }) => !isAllowedTransition(pet.status, target))) return `patch ${i} to ${target} was refused, but no accepted patch reached a state forbidding it`
  }
  return undefined
}

for (const store of testStores()) {
  describe(`updatePet: races, lists and durability (${store})`, () => {
    test('When 100 unconditional transitions of one pet race, then each is 200 or 409, and the pet ends in a state some serial order of them reaches', async (t) => {
      const api = await buildTestApp(t, { store, env: UNLIMITED })
      const pet = await createdPet(api, { name: 'Rex', categoryId: 3 })
      // mostly back and forth between available and pending, now and then sold (after which only sold is allowed)
      const patches = Array.from({ length: 100 }, (_, i): { name: string, status: PetStatus } => ({ name: `Step ${i}`, status: i % 13 === 12 ? 'sold' : i % 2 === 0 ? 'pending' : 'available' }))

      const answers = await Promise.all(patches.map(async (patch) => patchPet(api, pet.id, patch)))

      const final = (await getPet(api, pet.id)).json<Pet>()
      const problem = reachableBySomeSerialOrder(pet, patches, answers, final)
      assert.equal(problem, undefined, problem)
      for (const res of answers.filter((answer) => answer.statusCode === 409)) assertError(res, 'invalid_transition')
      assert.equal(final.status, 'sold')
      assert.ok(answers.some((res) => res.statusCode === 409), 'no patch came after the pet was sold')
    })

    test('When lists were read before a change, then the instance that made it lists it at once: filtered lists, the whole list and its cached pages', async (t) => {
      const api = await buildTestApp(t, { store })
      const rex = await createdPet(api, { name: 'Rex', categoryId: 3 })
      const tom = await createdPet(api, { name: 'Tom', categoryId: 4, status: 'pending' })
      // read twice: the second answer comes from the page cache
      for (let i = 0; i < 2; i++) {
        assert.deepEqual(await listedIds(api, 'available'), [rex.id])
        assert.deepEqual(await listedIds(api, 'pending'), [tom.id])
        assert.deepEqual(await listAllPets(api), [rex, tom])
      }

      assert.equal((await patchPet(api, rex.id, { status: 'pending', name: 'Rex II' })).statusCode, 200)
      assert.equal((await patchPet(api, tom.id, { status: 'sold' })).statusCode, 200)

      assert.deepEqual(await listedIds(api, 'available'), [])
      assert.deepEqual(await listedIds(api, 'pending'), [rex.id])
      assert.deepEqual(await listedIds(api, 'sold'), [tom.id])
      assert.deepEqual(await listAllPets(api), [{ ...rex, name: 'Rex II', status: 'pending' }, { ...tom, status: 'sold' }])
    })

    test('When pets change status during a keyset walk filtered by status, then no pet is listed twice, and every pet that kept the status is listed once', async (t) => {
      const api = await buildTestApp(t, { store })
      const pets: Pet[] = []
      for (let i = 0; i < 8; i++) pets.push(await createdPet(api, { name: `Pet ${i}`, categoryId: i }))
      const [first, , , , ahead, , , last] = pets as [Pet, Pet, Pet, Pet, Pet, Pet, Pet, Pet]

      const seen: Pet[] = []
      let url: string | undefined = '/v1/pets?limit=3&status=available'
      for (let page = 0; url !== undefined; page++) {
        const read: { pets: Pet[], next: string | undefined } = await listPage(api, url)
        seen.push(...read.pets)
        url = read.next
        if (page === 0) {
          // one the walk has passed leaves and comes back; one ahead of it leaves; the last one leaves and returns before the walk gets there
          for (const [pet, status] of [[first, 'pending'], [first, 'available'], [ahead, 'sold'], [last, 'pending'], [last, 'available']] as const) {
            assert.equal((await patchPet(api, pet.id, { status })).statusCode, 200)
          }
        }
      }

      const ids = seen.map((pet) => pet.id)
      assert.equal(new Set(ids).size, ids.length, `listed twice: ${ids.join(', ')}`)
      assert.deepEqual(ids, pets.filter((pet) => pet !== ahead).map((pet) => pet.id))
      assert.ok(seen.every((pet) => pet.status === 'available'))
    })

    test('When the app is restarted after changes, then the pets are as changed, with the same ETags', async (t) => {
      const first = await buildTestApp(t, { store })
      const rex = await createdPet(first, { name: 'Rex', categoryId: 3 })
      const tom = await createdPet(first, { name: 'Tom', categoryId: 4 })
      const rexTag = (await patchPet(first, rex.id, { status: 'sold', name: 'Rex II' })).headers.etag
      const tomTag = (await patchPet(first, tom.id, { status: 'pending' })).headers.etag
      await first.app.close()

      const second = await buildTestApp(t, { databaseUrl: first.databaseUrl, withKey: false })
      const api = { ...second, key: first.key, auth: first.auth }

      const rexRead = await getPet(api, rex.id)
      const tomRead = await getPet(api, tom.id)
      assert.deepEqual(rexRead.json(), { ...rex, name: 'Rex II', status: 'sold' })
      assert.equal(rexRead.headers.etag, rexTag)
      assert.deepEqual(tomRead.json(), { ...tom, status: 'pending' })
      assert.equal(tomRead.headers.etag, tomTag)
      assertError(await patchPet(api, rex.id, { status: 'available' }), 'invalid_transition')
    })
  })
}

import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import type { Event } from '../../src/capabilities/events/event-schemas.js'
import type { Pet, PetStatus } from '../../src/capabilities/pets/pet-schemas.js'
import { loadThenKill } from '../helpers/crash-load.js'
import { freshDatabaseUrl, testStores } from '../helpers/databases.js'
import { bearer, describeFetchError, listAllPetsOver, loadEnv, sleep, strongApiKey } from '../helpers/live-server.js'
import { serverProcesses, within, type ServerProcess } from '../helpers/processes.js'

// The outbox promise under SIGKILL: a pet change and its event are committed together or not at all.

/** Every event a live server's feed holds, following `next` from the start until a page comes back empty. */
async function allEventsOver (server: ServerProcess, apiKey: string): Promise<Event[]> {
  const events: Event[] = []
  let url = `${server.baseUrl}/v1/events?limit=100`
  for (;;) {
    const res = await fetch(url, { headers: bearer(apiKey), signal: AbortSignal.timeout(10_000) })
    const text = await res.text()
    assert.equal(res.status, 200, `${url}: ${text}`)
    const page = JSON.parse(text) as Event[]
    if (page.length === 0) return events
    events.push(...page)
    url = /^<([^>]+)>; rel="next"$/.exec(res.headers.get('link') ?? '')?.[1] ?? assert.fail('a feed page without a next link')
  }
}

/**
 * Replays the feed pet by pet and checks it against the stored pets: each pet has exactly one
 * pet.created event, each pet.updated event's `previous` is what the pet was before it, and the last
 * event of each pet is the pet as stored. So every committed change has its event and every event its change.
 */
function assertFeedMatchesPets (events: readonly Event[], pets: readonly Pet[]): void {
  const replayed = new Map<number, Pet>()
  let lastId = 0
  for (const event of events) {
    assert.ok(event.id > lastId, `event ${event.id} after ${lastId}`)
    lastId = event.id
    const { pet } = event.data
    if (event.type === 'pet.created') {
      assert.ok(!replayed.has(pet.id), `pet ${pet.id} has two pet.created events`)
    } else {
      const before = replayed.get(pet.id)
      assert.ok(before !== undefined, `pet.updated ${event.id} for pet ${pet.id} before its pet.created`)
      for (const [field, value] of Object.entries(event.data.previous)) {
        assert.equal(before[field as keyof Pet], value, `event ${event.id}: previous ${field}`)
        assert.notEqual(pet[field as keyof Pet], value, `event ${event.id}: ${field} did not change`)
      }
    }
    replayed.set(pet.id, pet)
  }
  assert.deepEqual([...replayed.values()].sort((a, b) => a.id - b.id), [...pets].sort((a, b) => a.id - b.id),
    'the pets as the feed tells them are the pets as stored')
}

/** Client loops changing `pets` (names, and status back and forth) until the process is SIGKILLed mid-way. */
async function patchThenKill (server: ServerProcess, apiKey: string, pets: readonly Pet[]): Promise<{ acknowledged: number, unanswered: number }> {
  // counted by the loops while the check below waits
  const counts = { acknowledged: 0, unanswered: 0 }
  const unexpected: string[] = []
  const loop = async (loopIndex: number): Promise<void> => {
    for (let n = 0; ; n++) {
      const pet = pets[(loopIndex * 7 + n) % pets.length] as Pet
      const status: PetStatus = n % 2 === 0 ? 'pending' : 'available'
      try {
        const res = await fetch(`${server.baseUrl}/v1/pets/${pet.id}`, {
          method: 'PATCH',
          headers: { ...bearer(apiKey), 'content-type': 'application/merge-patch+json' },
          body: JSON.stringify({ name: `patch-${loopIndex}-${n}`, status }),
          signal: AbortSignal.timeout(10_000)
        })
        const text = await res.text()
        if (res.status === 200) counts.acknowledged++
        else unexpected.push(`${res.status} ${text}`)
      } catch (error) {
        counts.unanswered++
        if (describeFetchError(error) === 'TimeoutError') unexpected.push('a PATCH timed out')
        return
      }
    }
  }
  const loops = Array.from({ length: 8 }, async (_, i) => { await loop(i) })
  const started = Date.now()
  while (counts.acknowledged < 150 && Date.now() - started < 3_000) await sleep(5)
  server.child.kill('SIGKILL')
  await server.waitForExit(5_000)
  await within(15_000, 'client loops did not stop after the kill', Promise.all(loops))
  assert.deepEqual(unexpected, [], 'every answer before the kill should be 200')
  return counts
}

for (const store of testStores()) {
  describe(`events under SIGKILL (${store})`, () => {
    test('When the process is SIGKILLed during a stream of creates, then after a restart every pet has its pet.created event and every event its pet', async (t) => {
      const servers = serverProcesses(t)
      const databaseUrl = await freshDatabaseUrl(t, store)
      const apiKey = strongApiKey()
      const env = loadEnv(databaseUrl, apiKey)

      const outcome = await loadThenKill(await servers.start(env), apiKey, 'events', false)
      const server = await servers.start(env)
      const pets = await listAllPetsOver(server.baseUrl, apiKey)
      const events = await allEventsOver(server, apiKey)

      assert.ok(pets.length >= outcome.acknowledged.length)
      assert.ok(events.every((event) => event.type === 'pet.created'))
      assertFeedMatchesPets(events, pets)
      t.diagnostic(`${store}: ${outcome.acknowledged.length} creates acknowledged, ${outcome.inFlightAtKill} in flight at SIGKILL; ` +
        `after restart ${pets.length} pets and ${events.length} events, one each`)
    })

    test('When the process is SIGKILLed during a stream of changes, then after a restart the feed replays to exactly the stored pets', async (t) => {
      const servers = serverProcesses(t)
      const databaseUrl = await freshDatabaseUrl(t, store)
      const apiKey = strongApiKey()
      const env = loadEnv(databaseUrl, apiKey)

      let server = await servers.start(env)
      const created: Pet[] = []
      for (let i = 0; i < 20; i++) {
        const res = await fetch(`${server.baseUrl}/v1/pets`, { method: 'POST', headers: { ...bearer(apiKey), 'content-type': 'application/json' }, body: JSON.stringify({ name: `pet-${i}`, categoryId: i }) })
        assert.equal(res.status, 201)
        created.push(await res.json() as Pet)
      }
      const outcome = await patchThenKill(server, apiKey, created)
      server = await servers.start(env)
      const pets = await listAllPetsOver(server.baseUrl, apiKey)
      const events = await allEventsOver(server, apiKey)

      assert.equal(pets.length, created.length)
      const updates = events.filter((event) => event.type === 'pet.updated').length
      assert.ok(updates >= outcome.acknowledged, `${updates} pet.updated events for ${outcome.acknowledged} acknowledged changes`)
      assert.ok(updates <= outcome.acknowledged + outcome.unanswered, 'more changes recorded than were sent')
      assertFeedMatchesPets(events, pets)
      t.diagnostic(`${store}: ${outcome.acknowledged} changes acknowledged, ${outcome.unanswered} cut off by SIGKILL; ${updates} pet.updated events after restart`)
    })
  })
}

import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import type { Event } from '../helpers/events.js'
import type { Pet, PetStatus } from '../../src/capabilities/pets/pet-schemas.js'
import { loadThenKill, summarize } from '../helpers/crash-load.js'
import { freshDatabaseUrl, testStores } from '../helpers/databases.js'
import { allEventsOver, bearer, describeFetchError, listAllPetsOver, loadEnv, sleep, strongApiKey } from '../helpers/live-server.js'
import { serverProcesses, within, type ServerProcess } from '../helpers/processes.js'

// The outbox promise under SIGKILL: a pet change and its event are committed together or not at all.

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
    if (event.type !== 'pet.created' && event.type !== 'pet.updated') continue
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

/** The kill comes once this many changes were answered 200, and while other changes are in flight. */
const ACKNOWLEDGED_BEFORE_KILL = 150
/** The loops must get there within this long; a machine that cannot is reported, not waited on. */
const MAX_LOAD_MS = 30_000
/** Client loops, each with one PATCH in flight at a time. */
const PATCH_LOOPS = 8

/** One PATCH a loop sent: its name is unique, so its event can be found in the feed. */
interface Change {
  name: string
  answer?: Pet
  error?: string
}

interface PatchOutcome {
  /** Changes answered 200 with the pet as it now is (some of them after the kill: answered just before it). */
  acknowledged: Array<Required<Pick<Change, 'name' | 'answer'>>>
  /** Changes in flight at the kill whose connection the kill cut: the client cannot know whether they were stored. */
  unanswered: Change[]
  /** Answered 200 when SIGKILL was sent. */
  acknowledgedAtKill: number
  /** Sent and not yet answered when SIGKILL was sent. */
  inFlightAtKill: number
}

/**
 * Client loops changing `pets` (names, and status back and forth) until the process is SIGKILLed: the kill
 * comes once {@link ACKNOWLEDGED_BEFORE_KILL} changes were answered and while others are in flight. A
 * loop sends nothing after the kill. Any answer but a 200, and any failed request that was not in
 * flight at the kill, fails the test: only the kill may cut a request off.
 */
async function patchThenKill (server: ServerProcess, apiKey: string, pets: readonly Pet[]): Promise<PatchOutcome> {
  const acknowledged: PatchOutcome['acknowledged'] = []
  const inFlight = new Set<Change>()
  const failed: Change[] = []
  const unexpected: string[] = []
  // set at the kill: the changes in flight then
  const kill: { inFlight?: ReadonlySet<Change> } = {}
  const loop = async (loopIndex: number): Promise<void> => {
    for (let n = 0; kill.inFlight === undefined; n++) {
      const pet = pets[(loopIndex * 7 + n) % pets.length] as Pet
      const status: PetStatus = n % 2 === 0 ? 'pending' : 'available'
      const change: Change = { name: `patch-${loopIndex}-${n}` }
      inFlight.add(change)
      try {
        const res = await fetch(`${server.baseUrl}/v1/pets/${pet.id}`, {
          method: 'PATCH',
          headers: { ...bearer(apiKey), 'content-type': 'application/merge-patch+json' },
          body: JSON.stringify({ name: change.name, status }),
          signal: AbortSignal.timeout(10_000)
        })
        const text = await res.text()
        if (res.status !== 200) {
          unexpected.push(`${change.name}: ${res.status} ${text}`)
          return
        }
        change.answer = JSON.parse(text) as Pet
        acknowledged.push({ name: change.name, answer: change.answer })
      } catch (error) {
        change.error = describeFetchError(error)
        failed.push(change)
        if (change.error === 'TimeoutError') unexpected.push(`${change.name} timed out`)
        return
      } finally {
        inFlight.delete(change)
      }
    }
  }
  const loops = Array.from({ length: PATCH_LOOPS }, async (_, i) => { await loop(i) })
  const started = Date.now()
  // the kill waits for enough acknowledgements with a change in flight; a failure or another answer ends the wait at once
  while (acknowledged.length < ACKNOWLEDGED_BEFORE_KILL || inFlight.size === 0) {
    if (failed.length > 0 || unexpected.length > 0 || Date.now() - started > MAX_LOAD_MS) break
    await sleep(5)
  }
  // nothing awaits between the last check and the kill: what is in flight now is what the kill cuts off
  const killedWhile = new Set(inFlight)
  kill.inFlight = killedWhile
  const acknowledgedAtKill = acknowledged.length
  server.child.kill('SIGKILL')
  assert.deepEqual(failed.map((change) => `${change.name}: ${change.error ?? ''}`), [], 'a PATCH failed before the process was killed')
  assert.deepEqual(unexpected, [], 'every answer before the kill should be 200')
  assert.ok(acknowledgedAtKill >= ACKNOWLEDGED_BEFORE_KILL, `only ${acknowledgedAtKill} changes were acknowledged in ${MAX_LOAD_MS} ms before the kill`)
  assert.ok(killedWhile.size > 0, 'no change was in flight at the kill')
  assert.deepEqual(await server.waitForExit(5_000), { code: null, signal: 'SIGKILL' })
  await within(15_000, 'client loops did not stop after the kill', Promise.all(loops))

  assert.deepEqual(unexpected, [], 'every answer should be 200')
  for (const change of failed) assert.ok(killedWhile.has(change), `${change.name} failed (${change.error ?? ''}) without being in flight at the kill`)
  // each change in flight at the kill was either answered just before it or cut off by it
  for (const change of killedWhile) assert.ok((change.answer === undefined) !== (change.error === undefined), `${change.name} in flight at the kill ended neither answered nor failed`)
  return { acknowledged, unanswered: failed, acknowledgedAtKill, inFlightAtKill: killedWhile.size }
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
      const events = await allEventsOver(server.baseUrl, apiKey)

      assert.ok(pets.length >= outcome.acknowledged.length)
      assert.ok(events.every((event) => event.type === 'pet.created'))
      assertFeedMatchesPets(events, pets)
      t.diagnostic(`${store}: ${outcome.acknowledged.length} creates acknowledged, ${outcome.inFlightAtKill} in flight at SIGKILL; ` +
        `after restart ${pets.length} pets and ${events.length} events, one each`)
    })

    test(`When the process is SIGKILLed during a stream of changes, with ${ACKNOWLEDGED_BEFORE_KILL} acknowledged and others in flight, then after a restart the feed replays to exactly the stored pets, with every acknowledged change in it`, async (t) => {
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
      const events = await allEventsOver(server.baseUrl, apiKey)

      assert.equal(pets.length, created.length)
      const updated = events.filter((event) => event.type === 'pet.updated').map((event) => event.data.pet)
      const updates = updated.length
      // every acknowledged change is in the feed as answered; any other change recorded is one the kill cut off
      const recorded = new Map(updated.map((pet) => [pet.name, pet]))
      assert.equal(recorded.size, updates, 'a change was recorded twice')
      const missing = outcome.acknowledged.filter(({ name }) => !recorded.has(name)).map(({ name }) => name)
      assert.deepEqual(missing, [], `${missing.length} acknowledged change(s) have no pet.updated event after the restart`)
      for (const { name, answer } of outcome.acknowledged) assert.deepEqual(recorded.get(name), answer, `the event of ${name} is not the pet its 200 answered`)
      const cutOff = new Set(outcome.unanswered.map((change) => change.name))
      const acknowledgedNames = new Set(outcome.acknowledged.map((change) => change.name))
      for (const name of recorded.keys()) assert.ok(acknowledgedNames.has(name) || cutOff.has(name), `${name} is recorded, yet it was neither acknowledged nor in flight at the kill`)
      assert.ok(updates >= outcome.acknowledged.length, `${updates} pet.updated events for ${outcome.acknowledged.length} acknowledged changes`)
      assert.ok(updates <= outcome.acknowledged.length + outcome.unanswered.length, 'more changes recorded than were sent')
      assertFeedMatchesPets(events, pets)
      t.diagnostic(`${store}: SIGKILL with ${outcome.acknowledgedAtKill} changes acknowledged and ${outcome.inFlightAtKill} in flight ` +
        `(${outcome.acknowledged.length - outcome.acknowledgedAtKill} of them answered just before it, ${outcome.unanswered.length} cut off: ` +
        `${summarize(outcome.unanswered.map((change) => change.error ?? ''))}); ` +
        `${updates} pet.updated events after restart, ${updates - outcome.acknowledged.length} of them for changes the kill cut off`)
    })
  })
}

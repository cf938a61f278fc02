import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import type { Pet, PetStatus } from '../../src/capabilities/pets/pet-schemas.js'
import { bearer, describeFetchError, listAllPetsOver, sleep } from './live-server.js'
import { within, type ServerProcess } from './processes.js'

// Load, SIGKILL and check-after-restart steps of the crash-durability tests (test/reliability/crash-*.test.ts).

/** Client loops posting at once: each keeps one request in flight on its own kept-alive connection. */
export const LOOPS = 16
/** The load runs at least this long, and until this many creates were acknowledged (or the maximum). */
const MIN_LOAD_MS = 300
const TARGET_ACKNOWLEDGED = 200
const MAX_LOAD_MS = 2_500
/** Fewer 201s than this before the kill would make the check meaningless: the machine is too slow. */
const MIN_ACKNOWLEDGED_PER_KILL = 40

const STATUSES: readonly PetStatus[] = ['available', 'pending', 'sold']

export interface NewPetBody { name: string, categoryId: number, status: PetStatus }

export interface Attempt {
  body: NewPetBody
  idempotencyKey?: string
}

export interface LoadOutcome {
  /** Answered 201 with a complete body. */
  acknowledged: Array<{ attempt: Attempt, pet: Pet }>
  /** No answer: the request failed on the connection (the kill), so the client cannot know whether it was stored. */
  unanswered: Array<{ attempt: Attempt, error: string }>
  /** Any answer other than 201: none is expected. */
  unexpected: string[]
  /** Requests sent and not yet answered when SIGKILL was sent. */
  inFlightAtKill: number
  loadMs: number
}

/**
 * Runs {@link LOOPS} client loops creating pets on `server` (fetch, which keeps connections alive),
 * SIGKILLs the process in the middle of the load, and returns what every request got. A loop stops
 * at its first failed request.
 */
export async function loadThenKill (server: ServerProcess, apiKey: string, label: string, idempotent: boolean): Promise<LoadOutcome> {
  const outcome: LoadOutcome = { acknowledged: [], unanswered: [], unexpected: [], inFlightAtKill: 0, loadMs: 0 }
  let inFlight = 0

  const loop = async (loopIndex: number): Promise<void> => {
    for (let n = 0; ; n++) {
      const attempt: Attempt = {
        body: { name: `${label}-${loopIndex}-${n}`, categoryId: loopIndex * 100_000 + n, status: STATUSES[n % STATUSES.length] as PetStatus },
        idempotencyKey: idempotent ? randomUUID() : undefined
      }
      inFlight++
      try {
        const res = await postAttempt(server.baseUrl, apiKey, attempt)
        const text = await res.text()
        if (res.status === 201) outcome.acknowledged.push({ attempt, pet: JSON.parse(text) as Pet })
        else outcome.unexpected.push(`${attempt.body.name}: ${res.status} ${text}`)
      } catch (error) {
        outcome.unanswered.push({ attempt, error: describeFetchError(error) })
        return
      } finally {
        inFlight--
      }
    }
  }

  const started = Date.now()
  const loops = Array.from({ length: LOOPS }, async (_, i) => { await loop(i) })
  for (;;) {
    const elapsed = Date.now() - started
    if ((elapsed >= MIN_LOAD_MS && outcome.acknowledged.length >= TARGET_ACKNOWLEDGED) || elapsed >= MAX_LOAD_MS) break
    // a loop that ended early saw an error before the kill: stop and report it
    if (outcome.unanswered.length > 0) break
    await sleep(5)
  }
  assert.deepEqual(outcome.unanswered, [], 'requests failed before the process was killed')
  outcome.loadMs = Date.now() - started
  outcome.inFlightAtKill = inFlight
  server.child.kill('SIGKILL')
  const exit = await server.waitForExit(5_000)
  assert.deepEqual(exit, { code: null, signal: 'SIGKILL' })
  await within(15_000, 'client loops did not stop after the kill', Promise.all(loops))
  assert.deepEqual(outcome.unexpected, [], 'every answer before the kill should be 201')
  assert.ok(outcome.acknowledged.length >= MIN_ACKNOWLEDGED_PER_KILL,
    `only ${outcome.acknowledged.length} creates were acknowledged in ${outcome.loadMs} ms before the kill`)
  assert.ok(outcome.inFlightAtKill > 0, 'no request was in flight at the kill')
  assert.equal(outcome.unanswered.length, LOOPS, 'every loop ends with one unanswered request')
  return outcome
}

export async function postAttempt (baseUrl: string, apiKey: string, attempt: Attempt): Promise<Response> {
  const headers: Record<string, string> = { ...bearer(apiKey), 'content-type': 'application/json' }
  if (attempt.idempotencyKey !== undefined) headers['idempotency-key'] = attempt.idempotencyKey
  return fetch(`${baseUrl}/v1/pets`, { method: 'POST', headers, body: JSON.stringify(attempt.body), signal: AbortSignal.timeout(10_000) })
}

/** Reads a pet one by one with `GET /v1/pets/{id}` and checks it is exactly `pet`. */
export async function assertReadable (server: ServerProcess, apiKey: string, pet: Pet): Promise<void> {
  const res = await fetch(`${server.baseUrl}/v1/pets/${pet.id}`, { headers: bearer(apiKey), signal: AbortSignal.timeout(10_000) })
  const text = await res.text()
  assert.equal(res.status, 200, `GET /v1/pets/${pet.id} (${pet.name}): ${text}`)
  assert.deepEqual(JSON.parse(text), pet)
}

/**
 * Lists every pet on the restarted `server` and checks: each acknowledged pet is there exactly as
 * answered, no name is there twice, ids ascend, and every pet is one a client asked for.
 */
export async function listAndCheck (server: ServerProcess, apiKey: string, acknowledged: ReadonlyMap<string, Pet>, attempted: ReadonlySet<string>): Promise<Map<string, Pet>> {
  const listed = await listAllPetsOver(server.baseUrl, apiKey)
  const byName = new Map<string, Pet>()
  let previousId = 0
  for (const pet of listed) {
    assert.ok(!byName.has(pet.name), `pet "${pet.name}" is stored twice: ids ${byName.get(pet.name)?.id} and ${pet.id}`)
    assert.ok(attempted.has(pet.name), `pet ${JSON.stringify(pet)} was never asked for`)
    assert.ok(pet.id > previousId, `ids out of order: ${pet.id} after ${previousId}`)
    previousId = pet.id
    byName.set(pet.name, pet)
  }
  const missing = [...acknowledged.values()].filter((pet) => !byName.has(pet.name))
  assert.deepEqual(missing, [], `${missing.length} acknowledged pet(s) are missing after the restart`)
  for (const [name, pet] of acknowledged) assert.deepEqual(byName.get(name), pet, `pet "${name}" differs from its 201 answer`)
  return byName
}

/** `3× ECONNRESET, 1× UND_ERR_SOCKET`: how often each value occurs. */
export function summarize (values: readonly string[]): string {
  const counts = new Map<string, number>()
  for (const value of values) counts.set(value, (counts.get(value) ?? 0) + 1)
  return [...counts].map(([value, count]) => `${count}× ${value}`).join(', ')
}

import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import type { Pet } from '../../src/capabilities/pets/pet-schemas.js'
import { listAndCheck, loadThenKill, postAttempt, type Attempt } from '../helpers/crash-load.js'
import { execSql, freshDatabaseUrl, testStores, type StoreKind } from '../helpers/databases.js'
import { loadEnv, mapConcurrently, pastLockTime, strongApiKey } from '../helpers/live-server.js'
import { serverProcesses, type ServerProcess } from '../helpers/processes.js'

/** Kill cycles per store: the keys answered before a kill or on a retry after it must all survive the next. */
const KILLS = 2

for (const store of testStores()) {
  describe(`crash durability with Idempotency-Key: SIGKILL under load (${store})`, () => {
    test('When every create carries an Idempotency-Key and the process is SIGKILLed, then retrying each unanswered request with its key and body yields 201 and no duplicate', async (t) => {
      // before freshDatabaseUrl: the processes die before their SQLite directory is removed
      const servers = serverProcesses(t)
      const databaseUrl = await freshDatabaseUrl(t, store)
      const apiKey = strongApiKey()
      const env = loadEnv(databaseUrl, apiKey)

      /** Idempotency-Key → the pet its 201 carried, before the kill or on a retry after it. */
      const answered = new Map<string, Pet>()
      const attempted = new Set<string>()
      let server = await servers.start(env)
      for (let kill = 1; kill <= KILLS; kill++) {
        const outcome = await loadThenKill(server, apiKey, `crash-idem-k${kill}`, true)
        for (const { attempt, pet } of outcome.acknowledged) {
          assert.deepEqual(pet, { id: pet.id, ...attempt.body })
          answered.set(attempt.idempotencyKey ?? '', pet)
          attempted.add(attempt.body.name)
        }
        for (const { attempt } of outcome.unanswered) attempted.add(attempt.body.name)

        server = await servers.start(env)
        const retried = await retryUnanswered(store, server, apiKey, databaseUrl, outcome.unanswered.map((u) => u.attempt))
        for (const { attempt, pet } of retried.answers) answered.set(attempt.idempotencyKey ?? '', pet)

        // a key answered before the kill still replays its first answer
        for (const { attempt, pet } of outcome.acknowledged.slice(-8)) {
          const res = await postAttempt(server.baseUrl, apiKey, attempt)
          assert.equal(res.status, 201)
          assert.equal(res.headers.get('idempotent-replayed'), 'true')
          assert.deepEqual(await res.json(), pet)
        }

        const answeredByName = new Map([...answered.values()].map((pet) => [pet.name, pet]))
        assert.equal(answeredByName.size, answered.size, 'two keys were answered with pets of one name')
        const stored = await listAndCheck(server, apiKey, answeredByName, attempted)
        assert.equal(stored.size, answered.size, `${stored.size} pets stored for ${answered.size} keys answered 201`)

        t.diagnostic(`${store} kill ${kill}: ${outcome.acknowledged.length} creates acknowledged in ${outcome.loadMs} ms, ` +
          `${outcome.unanswered.length} unanswered retried after restart: ${retried.replayed} replayed (stored before the kill), ` +
          `${retried.fresh} created on the first retry, ${retried.abandonedClaims} held by the dead process's claim (409, created once its lease ran out); ` +
          `${stored.size} pets stored = ${answered.size} keys answered 201`)
      }
    })
  })
}

interface RetryOutcome {
  answers: Array<{ attempt: Attempt, pet: Pet }>
  /** Stored before the kill, answered again from the key's record. */
  replayed: number
  /** Not stored before the kill: created by the first retry. */
  fresh: number
  /** Claimed by the killed process, nothing stored: 409 until the lease ended, then created. */
  abandonedClaims: number
}

/**
 * Retries every unanswered create with its key and body on the restarted server. A key the killed
 * process had claimed without storing anything answers 409 until the claim's lease (60 s) runs
 * out, as documented; the test moves those leases into the past, as 60 s passing would, and retries again.
 */
async function retryUnanswered (store: StoreKind, server: ServerProcess, apiKey: string, databaseUrl: string, attempts: Attempt[]): Promise<RetryOutcome> {
  const outcome: RetryOutcome = { answers: [], replayed: 0, fresh: 0, abandonedClaims: 0 }
  const inProgress: Attempt[] = []
  await mapConcurrently(attempts, 8, async (attempt) => {
    const res = await postAttempt(server.baseUrl, apiKey, attempt)
    const text = await res.text()
    if (res.status === 409) {
      assert.equal(JSON.parse(text).code, 'idempotency_request_in_progress', text)
      assert.equal(res.headers.get('retry-after'), '1')
      inProgress.push(attempt)
      return
    }
    assert.equal(res.status, 201, `retry of ${attempt.body.name}: ${text}`)
    const pet = JSON.parse(text) as Pet
    assert.deepEqual(pet, { id: pet.id, ...attempt.body })
    if (res.headers.get('idempotent-replayed') === 'true') outcome.replayed++
    else outcome.fresh++
    outcome.answers.push({ attempt, pet })
  })

  outcome.abandonedClaims = inProgress.length
  if (inProgress.length > 0) {
    // the only claims still open are the dead process's: this server has answered everything it got
    const open = await execSql(databaseUrl, 'SELECT key FROM idempotency_keys WHERE token IS NOT NULL')
    assert.deepEqual(open.map((row) => String(row.key)).sort(), inProgress.map((a) => a.idempotencyKey).sort())
    await execSql(databaseUrl, 'UPDATE idempotency_keys SET locked_until = $1 WHERE token IS NOT NULL', [pastLockTime(store)])
    for (const attempt of inProgress) {
      const res = await postAttempt(server.baseUrl, apiKey, attempt)
      const text = await res.text()
      assert.equal(res.status, 201, `retry of ${attempt.body.name} once its abandoned claim expired: ${text}`)
      assert.equal(res.headers.get('idempotent-replayed'), null, 'nothing was stored under an abandoned claim')
      const pet = JSON.parse(text) as Pet
      assert.deepEqual(pet, { id: pet.id, ...attempt.body })
      outcome.answers.push({ attempt, pet })
    }
  }
  return outcome
}

import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import type { Pet } from '../../src/capabilities/pets/pet-schemas.js'
import { assertReadable, listAndCheck, loadThenKill, LOOPS, summarize } from '../helpers/crash-load.js'
import { freshDatabaseUrl, testStores } from '../helpers/databases.js'
import { loadEnv, strongApiKey } from '../helpers/live-server.js'
import { serverProcesses } from '../helpers/processes.js'

/** Kill cycles per store: acknowledged writes accumulate, and each restart must still hold them all. */
const KILLS = 3

for (const store of testStores()) {
  describe(`crash durability: SIGKILL under load (${store})`, () => {
    test('When the process is SIGKILLed three times during a stream of creates, then after each restart every acknowledged pet is there exactly as answered, once', async (t) => {
      // before freshDatabaseUrl: the processes die before their SQLite directory is removed
      const servers = serverProcesses(t)
      const databaseUrl = await freshDatabaseUrl(t, store)
      const apiKey = strongApiKey()
      const env = loadEnv(databaseUrl, apiKey)

      const acknowledged = new Map<string, Pet>()
      const attempted = new Set<string>()
      const unanswered = new Set<string>()
      let server = await servers.start(env)
      for (let kill = 1; kill <= KILLS; kill++) {
        const outcome = await loadThenKill(server, apiKey, `crash-k${kill}`, false)
        for (const { attempt, pet } of outcome.acknowledged) {
          assert.deepEqual(pet, { id: pet.id, ...attempt.body }, 'a 201 answers the pet as sent, with its id')
          acknowledged.set(attempt.body.name, pet)
          attempted.add(attempt.body.name)
        }
        for (const { attempt } of outcome.unanswered) {
          attempted.add(attempt.body.name)
          unanswered.add(attempt.body.name)
        }

        server = await servers.start(env)
        const stored = await listAndCheck(server, apiKey, acknowledged, attempted)
        // the last acknowledgements before each kill are the writes most at risk: read them one by one too
        for (const { pet } of outcome.acknowledged.slice(-LOOPS)) await assertReadable(server, apiKey, pet)
        // a pet nobody got a 201 for can only be one whose answer the kill cut off
        const unacknowledgedStored = [...stored.keys()].filter((name) => !acknowledged.has(name))
        for (const name of unacknowledgedStored) assert.ok(unanswered.has(name), `pet "${name}" is stored, yet its request was answered with an error`)

        t.diagnostic(`${store} kill ${kill}: ${outcome.acknowledged.length} creates acknowledged in ${outcome.loadMs} ms, ` +
          `${outcome.inFlightAtKill} in flight at SIGKILL (${summarize(outcome.unanswered.map((u) => u.error))}); ` +
          `after restart all ${acknowledged.size} acknowledged so far verified, ` +
          `${stored.size} pets stored (${unacknowledgedStored.length} of them, over all kills so far, committed without an answer)`)
      }
    })
  })
}

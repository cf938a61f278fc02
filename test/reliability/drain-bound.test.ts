import assert from 'node:assert/strict'
import type { Socket } from 'node:net'
import { describe, test } from 'node:test'
import { execSql, freshDatabaseUrl, testStores } from '../helpers/databases.js'
import { loadEnv, postPetHead, sleep, strongApiKey, waitForArrivedCreates } from '../helpers/live-server.js'
import { openSocket, readResponse, serverProcesses } from '../helpers/processes.js'

/** The README's bound: the process exits within 15 s of SIGTERM, whatever its clients do. */
const DRAIN_BOUND_MS = 15_000

/** Everything the server sends on `socket` until it closes the connection, and when it closed it. */
async function untilClosed (socket: Socket): Promise<{ received: string, at: number }> {
  return new Promise((resolve) => {
    let received = ''
    socket.on('data', (chunk: Buffer) => { received += chunk.toString('latin1') })
    socket.on('error', () => {})
    socket.once('close', () => { resolve({ received, at: performance.now() }) })
  })
}

// the create that finishes during the drain writes to the store, which must still be open: on each store.
// Side by side: each waits 10 s on the stalled upload and keeps no core busy meanwhile
describe('drain bound', { concurrency: true }, () => {
  for (const store of testStores()) {
    describe(`a client that never finishes its upload (${store})`, () => {
      test('When an upload stalls across SIGTERM, then the other in-flight create still gets its 201, the stalled one is cut off unstored, and the process exits 0 within 15 s', async (t) => {
        const servers = serverProcesses(t)
        const databaseUrl = await freshDatabaseUrl(t, store)
        const apiKey = strongApiKey()
        const server = await servers.start(loadEnv(databaseUrl, apiKey))
        const exitTime = server.exited.then(() => performance.now())

        const stalled = await openSocket(server.port)
        const prompt = await openSocket(server.port)
        t.after(() => { stalled.destroy(); prompt.destroy() })
        const stalledEnd = untilClosed(stalled)
        prompt.on('error', () => {})
        const promptAnswer = readResponse(prompt, DRAIN_BOUND_MS).then((response) => ({ response }), (error: unknown) => ({ error }))
        const stalledBody = JSON.stringify({ name: 'never-finished', categoryId: 1 })
        const promptBody = JSON.stringify({ name: 'finished-in-drain', categoryId: 2 })
        stalled.write(postPetHead(server, apiKey, Buffer.byteLength(stalledBody)) + stalledBody.slice(0, 10))
        prompt.write(postPetHead(server, apiKey, Buffer.byteLength(promptBody)) + promptBody.slice(0, 10))
        await waitForArrivedCreates(server, 2)

        const sigtermAt = performance.now()
        server.child.kill('SIGTERM')
        await sleep(300)
        prompt.write(promptBody.slice(10))
        const prompted = await promptAnswer
        const exit = await server.waitForExit(DRAIN_BOUND_MS + 2_000)
        const drainMs = await exitTime - sigtermAt
        const { received, at: stalledClosedAt } = await stalledEnd

        assert.ok('response' in prompted, `the create that finished during the drain got no answer: ${String((prompted as { error: unknown }).error)}`)
        assert.equal(prompted.response.status, 201, prompted.response.body)
        assert.deepEqual(exit, { code: 0, signal: null })
        // the bound is the behaviour (README's 15 s; exit 0 says the process kept its budget by its own clock): the
        // stalled upload is cut at 10 s, which leaves 5 s for a loaded machine (the two stores' runs wait side by side)
        assert.ok(drainMs < DRAIN_BOUND_MS, `the drain took ${drainMs.toFixed(0)} ms`)
        // whatever it got, it was not a success, and nothing of it was stored
        assert.doesNotMatch(received, /^HTTP\/1\.1 2/)
        assert.deepEqual((await execSql(databaseUrl, 'SELECT name FROM pets ORDER BY id')).map((row) => row.name), ['finished-in-drain'])

        const answer = received === '' ? 'no answer, connection closed' : received.split('\r\n')[0]
        t.diagnostic(`${store}: stalled upload: ${answer} ${(stalledClosedAt - sigtermAt).toFixed(0)} ms after SIGTERM; ` +
          `exit 0 ${drainMs.toFixed(0)} ms after SIGTERM (bound ${DRAIN_BOUND_MS} ms)`)
      })
    })
  }
})

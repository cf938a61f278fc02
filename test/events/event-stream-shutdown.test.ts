import assert from 'node:assert/strict'
import type { Socket } from 'node:net'
import { describe, test } from 'node:test'
import { freshDatabaseUrl, testStores } from '../helpers/databases.js'
import { openStream } from '../helpers/event-stream-client.js'
import { bearer, loadEnv, strongApiKey } from '../helpers/live-server.js'
import { openSocket, serverProcesses, within } from '../helpers/processes.js'

/** Streams opened, read and then abandoned by their consumer before SIGTERM. */
const ABORTED = 5
/** Without any stream the drain takes about 50 ms; the drain's cut of what is left comes at 10 s. */
const PROMPT_EXIT_MS = 3_000

/** Resolves with the time `socket` was closed, by either side. */
async function closedAt (socket: Socket): Promise<number> {
  return new Promise((resolve) => { socket.once('close', () => { resolve(performance.now()) }) })
}

for (const store of testStores()) {
  describe(`the event stream and SIGTERM (${store})`, () => {
    test(`When consumers hung up on ${ABORTED} streams (fetch keeping a spare connection, as it does after an abort) and one stream is still open, then SIGTERM ends that stream cleanly, closes the spare connections and exits 0 within ${PROMPT_EXIT_MS} ms`, async (t) => {
      const servers = serverProcesses(t)
      const databaseUrl = await freshDatabaseUrl(t, store)
      const apiKey = strongApiKey()
      const server = await servers.start(loadEnv(databaseUrl, apiKey))
      const exitTime = server.exited.then(() => performance.now())

      for (let i = 0; i < ABORTED; i++) {
        const controller = new AbortController()
        const response = await fetch(`${server.baseUrl}/v1/events`, { headers: { ...bearer(apiKey), accept: 'text/event-stream' }, signal: controller.signal })
        assert.equal(response.status, 200)
        // the stream's opening (its retry field) has arrived: the stream is open on the server
        await response.body?.getReader().read()
        controller.abort()
      }
      // what such a client may hold whatever its fetch does: a connection opened and never used (browsers preconnect too)
      const spare = await openSocket(server.port)
      spare.on('error', () => {})
      t.after(() => { spare.destroy() })
      const spareClosed = closedAt(spare)
      const open = await openStream(server.baseUrl, '/v1/events', bearer(apiKey))
      assert.equal(open.status, 200)
      // the server has seen every abort: each logged its stream's end
      await server.waitForStdout(new RegExp(`(?:"stream closed prematurely"[^]*){${ABORTED}}`), 10_000)

      const sigtermAt = performance.now()
      server.child.kill('SIGTERM')
      const exit = await server.waitForExit(20_000)
      const drainMs = await exitTime - sigtermAt

      assert.equal(await within(1_000, 'the open stream did not end', open.ended), 'clean', 'the open stream ended as HTTP ends a body: its consumer resumes elsewhere')
      assert.ok(await within(1_000, 'the spare connection was never closed', spareClosed) < await exitTime, 'the spare connection was closed before the exit')
      assert.deepEqual(exit, { code: 0, signal: null })
      assert.ok(drainMs < PROMPT_EXIT_MS, `SIGTERM took ${drainMs.toFixed(0)} ms to end the process (bound ${PROMPT_EXIT_MS} ms)`)
      t.diagnostic(`${store}: ${ABORTED} streams aborted, one open: exit 0 ${drainMs.toFixed(0)} ms after SIGTERM`)
    })
  })
}

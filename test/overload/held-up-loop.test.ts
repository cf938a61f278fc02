import assert from 'node:assert/strict'
import { describe, test, type TestContext } from 'node:test'
import { OVERLOAD_SAMPLE_INTERVAL_MS } from '../../src/infra/http/load-shedding.js'
import { freshDatabaseUrl, testStores } from '../helpers/databases.js'
import { bearer, sleep, strongApiKey } from '../helpers/live-server.js'
import { get, pollUntil, shedCount, starve, statusCounts, type Answer } from '../helpers/overload.js'
import { freePort, serverProcesses, type ServerProcess } from '../helpers/processes.js'

// shedding on, at its default bounds; the host holds the loop up by stopping the process for most of
// each period (SIGSTOP, SIGCONT), as a container at its CPU quota or a busy machine does
const DEFAULTS = { OVERLOAD_SHEDDING: 'true', RATE_LIMIT_MAX: '0', LOG_LEVEL: 'warn' }

for (const store of testStores()) {
  describe(`load shedding: start-up is not load (${store})`, () => {
    test('When a new instance gets 3 % of a CPU while its start-up work runs (seconds of it), then the requests two clients send meanwhile are all served (building the documents is no load)', async (t) => {
      const apiKey = strongApiKey()
      const metricsPort = await freePort()
      // a step of the build is seconds of a starved process, past which a query's timer fires before its answer is
      // read (timers run before I/O): the store's timeout is not what this test is about
      const server = await serverProcesses(t).spawn({ DATABASE_URL: await freshDatabaseUrl(t, store), PETSTORE_API_KEYS: apiKey, METRICS_PORT: String(metricsPort), ...DEFAULTS, DATABASE_TIMEOUT_MS: '30000' })
      for (;;) {
        const answer = await get(server, '/healthz').catch(() => undefined)
        if (answer?.status === 200) break
        assert.ok(server.running, server.stderr)
        await sleep(5)
      }
      // the served documents are built by the first request for one, in steps (ignoreLoadDuring), while the host gives
      // the process 5 ms of CPU in each 155 ms. That request comes alone (20 ms before the host starts), the clients a
      // few periods later: starved with their connections queued before the build began, the loop would be behind
      // with work waiting, which is load (the starved tests below), start-up or not
      const documents = get(server, '/v1/openapi.json')
      await sleep(20)
      const starved = performance.now()
      const stopStarving = starve(server.pid, 150, 5)
      t.after(stopStarving)
      await sleep(300)
      const state = { sending: true }
      const answers: Answer[] = []
      const clients = [0, 1].map(async () => {
        while (state.sending) {
          answers.push(await get(server, '/v1/pets', bearer(apiKey)))
          await sleep(50)
        }
      })

      // the documents are the start-up's last work; then the host gives the CPU back, and the clients go on
      answers.push(await documents)
      const startUpMs = performance.now() - starved
      await stopStarving()
      await sleep(3 * OVERLOAD_SAMPLE_INTERVAL_MS)
      state.sending = false
      await Promise.all(clients)

      t.diagnostic(`start-up work starved for ${Math.round(startUpMs)} ms; answers ${JSON.stringify(statusCounts(answers))}`)
      assert.deepEqual(statusCounts(answers), { 200: answers.length })
      assert.equal(await shedCount(metricsPort), 0)
      // shedding takes two samples in a row past a bound: start-up work shorter than that could not be taken for load
      assert.ok(startUpMs > 2 * OVERLOAD_SAMPLE_INTERVAL_MS, `the start-up work took only ${Math.round(startUpMs)} ms, less than two samples`)
    })
  })
}

// the event loop read alone: the shedder reads the loop and the socket tables, not the store, so these run on SQLite
const DELAY_ONLY = { ...DEFAULTS, OVERLOAD_MAX_ACCEPT_QUEUE: '0' }

/** A server whose documents are built, then stopped by the host 700 ms of every 730 until /readyz says overloaded. */
async function heldUpServer (t: TestContext): Promise<{ apiKey: string, server: ServerProcess, stopStarving: () => Promise<void> }> {
  const apiKey = strongApiKey()
  const server = await serverProcesses(t).start({ DATABASE_URL: await freshDatabaseUrl(t, 'sqlite'), PETSTORE_API_KEYS: apiKey, ...DELAY_ONLY })
  assert.equal((await get(server, '/v1/openapi.json')).status, 200)
  const stopStarving = starve(server.pid, 700, 30)
  t.after(stopStarving)
  await pollUntil(server, '/readyz', (answer) => answer.status === 503)
  return { apiKey, server, stopStarving }
}

describe('load shedding: requests arriving while the loop is held up', () => {
  test('When the loop stays over its delay bound (stopped 700 ms of every 730) and a lone client sends one request at a time, seconds apart, then each is served while /readyz says overloaded', async (t) => {
    const { apiKey, server, stopStarving } = await heldUpServer(t)

    // one request in a sample is no work waiting: it is the only one the late loop holds up
    const readyz: Answer[] = []
    const answers: Answer[] = []
    for (let i = 0; i < 4; i++) {
      await sleep(3 * OVERLOAD_SAMPLE_INTERVAL_MS)
      readyz.push(await get(server, '/readyz'))
      answers.push(await get(server, '/v1/pets', bearer(apiKey)))
    }
    await stopStarving()

    assert.deepEqual(readyz.map((answer) => answer.status), [503, 503, 503, 503], 'the loop caught up meanwhile: the test shows nothing')
    assert.deepEqual(answers.map((answer) => `${answer.status} ${answer.status === 200 ? '' : answer.body}`), ['200 ', '200 ', '200 ', '200 '])
  })

  test('When the loop stays over its delay bound and three clients keep sending, then once more than one request arrived in a sample every request is shed, the first of each sample too', async (t) => {
    const { apiKey, server, stopStarving } = await heldUpServer(t)

    const state = { sending: true }
    const started = performance.now()
    // each answer with the ms after the clients started at which its request was sent
    const answers: Array<{ sentAt: number, answer: Answer }> = []
    const clients = [0, 1, 2].map(async () => {
      while (state.sending) {
        const sentAt = performance.now() - started
        answers.push({ sentAt, answer: await get(server, '/v1/pets', bearer(apiKey)) })
      }
    })
    const readyz: Answer[] = []
    for (const until = performance.now() + 5_000; performance.now() < until; await sleep(300)) readyz.push(await get(server, '/readyz'))
    state.sending = false
    await Promise.all(clients)
    await stopStarving()

    assert.deepEqual(readyz.filter((answer) => answer.status !== 503).map((answer) => answer.body), [], 'the loop caught up meanwhile: the test shows nothing')
    // from the second sample on, the one before saw several arrive
    const later = answers.filter(({ sentAt }) => sentAt > 3 * OVERLOAD_SAMPLE_INTERVAL_MS)
    t.diagnostic(`${answers.length} requests, ${later.length} after the first samples: ${JSON.stringify(statusCounts(later.map(({ answer }) => answer)))}`)
    assert.ok(later.length >= 6, `only ${later.length} requests were sent after the first samples`)
    assert.deepEqual(later.filter(({ answer }) => answer.status !== 503).map(({ sentAt, answer }) => `${answer.status} sent at ${Math.round(sentAt)} ms`), [])
  })
})

import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { runWrk } from '../../tools/harness/wrk.js'
import { freshDatabaseUrl } from '../helpers/databases.js'
import { bearer, sleep, strongApiKey } from '../helpers/live-server.js'
import { get, keepGetting, pollUntil, shedCount, starve, wrkMissing, type Answer } from '../helpers/overload.js'
import { freePort, serverProcesses } from '../helpers/processes.js'

// the triggers on by default, each alone, at its default bound; the shedder reads the event loop and the
// socket tables, not the store, so these run on SQLite (the false alarms run on both stores)
const DEFAULTS = { OVERLOAD_SHEDDING: 'true', RATE_LIMIT_MAX: '0', LOG_LEVEL: 'warn' }

interface Readiness { code: string, message: string }

describe('load shedding: each default trigger alone', () => {
  test('When the event loop stays over its 100 ms delay bound while requests wait (the process starved of CPU), then new requests are shed and /readyz names the delay, until it catches up', async (t) => {
    const apiKey = strongApiKey()
    const metricsPort = await freePort()
    const server = await serverProcesses(t).start({ DATABASE_URL: await freshDatabaseUrl(t, 'sqlite'), PETSTORE_API_KEYS: apiKey, METRICS_PORT: String(metricsPort), ...DEFAULTS, OVERLOAD_MAX_ACCEPT_QUEUE: '0' })
    // work in flight all along: the kept-alive clients of a busy instance
    const load = keepGetting(server, '/v1/pets?limit=10', bearer(apiKey), 4)
    // stopped 450 ms of every 480: each 10 ms tick of the loop's timer fires hundreds of ms late, sample after sample
    const stopStarving = starve(server.pid, 450, 30)
    let starving = true
    t.after(async () => {
      if (starving) await stopStarving()
      await load.stop()
    })
    const shed = await pollUntil(server, '/v1/pets', (answer) => answer.status === 503, async () => {}, bearer(apiKey))
    const readyz = await pollUntil(server, '/readyz', (answer) => answer.status === 503)
    starving = false
    await stopStarving()

    assert.equal((JSON.parse(shed.body) as Readiness).code, 'overloaded')
    const reason = JSON.parse(readyz.body) as Readiness
    assert.equal(reason.code, 'overloaded')
    assert.match(reason.message, /^This instance is overloaded and sheds new requests: event-loop delay (\d+) ms \(bound 100 ms\), utilisation \d+% \(bound none\), \d+ connections waiting to be accepted \(bound none\), for 2 samples of 500 ms in a row\.$/)
    assert.ok(Number(/delay (\d+) ms/.exec(reason.message)?.[1]) > 100, reason.message)
    await pollUntil(server, '/readyz', (answer) => answer.status === 200)
    await load.stop()
    assert.equal((await get(server, '/v1/pets', bearer(apiKey))).status, 200)
    assert.ok(await shedCount(metricsPort) > 0)
  })

  test('When more than 64 connections wait in the accept queue sample after sample (wrk, 2,000 connections), then new requests are shed and /readyz names the queue', { skip: wrkMissing() }, async (t) => {
    const apiKey = strongApiKey()
    const server = await serverProcesses(t).start({ DATABASE_URL: await freshDatabaseUrl(t, 'sqlite'), PETSTORE_API_KEYS: apiKey, ...DEFAULTS, OVERLOAD_MAX_EVENT_LOOP_DELAY_MS: '0' })
    const load = runWrk({ origin: server.baseUrl, headers: bearer(apiKey), requests: [{ method: 'GET', path: '/v1/pets?limit=10' }], connections: 2_000, durationSeconds: 8 })
    const readyz = await pollUntil(server, '/readyz', (answer) => answer.status === 503)
    const result = await load

    const reason = JSON.parse(readyz.body) as Readiness
    assert.match(reason.message, /^This instance is overloaded and sheds new requests: event-loop delay \d+ ms \(bound none\), utilisation \d+% \(bound none\), (\d+) connections waiting to be accepted \(bound 64\), for 2 samples of 500 ms in a row\.$/)
    assert.ok(Number(/(\d+) connections waiting/.exec(reason.message)?.[1]) > 64, reason.message)
    assert.ok(result.non2xx > 0, 'wrk got no shed answer')
    await pollUntil(server, '/readyz', (answer) => answer.status === 200)
    assert.equal((await get(server, '/v1/pets', bearer(apiKey))).status, 200)
  })

  test('When 2,000 connections load the instance, then it sheds, and while it does every side request on a new connection (40, 200 ms apart) is answered (200 or 503) within 2 s', { skip: wrkMissing() }, async (t) => {
    const apiKey = strongApiKey()
    const server = await serverProcesses(t).start({ DATABASE_URL: await freshDatabaseUrl(t, 'sqlite'), PETSTORE_API_KEYS: apiKey, ...DEFAULTS })
    const load = runWrk({ origin: server.baseUrl, headers: bearer(apiKey), requests: [{ method: 'GET', path: '/v1/pets?limit=10' }], connections: 2_000, durationSeconds: 30 })
    const state = { loading: true }
    load.finally(() => { state.loading = false }).catch(() => {})
    // from the moment it sheds: how soon it starts is the bench's to measure (npm run bench -- --only overload); the load
    // lasts long enough for 40 side requests after a late start (on Node 24 a CI run saw shedding begin after 13 s)
    await pollUntil(server, '/readyz', (answer) => answer.status === 503)
    const side: Array<Promise<{ answer?: Answer, ms: number, error?: string }>> = []
    while (state.loading && side.length < 40) {
      const started = performance.now()
      side.push(get(server, '/v1/pets?limit=1', bearer(apiKey)).then(
        (answer) => ({ answer, ms: performance.now() - started }),
        (error: unknown) => ({ ms: performance.now() - started, error: String(error) })))
      await sleep(200)
    }
    const result = await load
    const answers = await Promise.all(side)

    assert.ok(result.non2xx > 0, 'the load was never shed')
    assert.ok(answers.length >= 40, `only ${answers.length} side requests were sent before the load ended`)
    // the promise: a new client (a balancer's probe) hears back within 2 s, however busy the instance
    const late = answers.filter(({ answer, ms }) => answer === undefined || ms > 2_000)
    assert.deepEqual(late.map(({ answer, ms, error }) => `${answer?.status ?? error} after ${Math.round(ms)} ms`), [])
    assert.deepEqual(answers.filter(({ answer }) => answer?.status !== 200 && answer?.status !== 503).map(({ answer }) => answer?.body), [])
    t.diagnostic(`wrk: ${Math.round(result.reqPerSec)} req/s, ${result.non2xx} shed; ${answers.length} side requests, ` +
      `${answers.filter(({ answer }) => answer?.status === 503).length} shed, slowest ${Math.round(Math.max(...answers.map(({ ms }) => ms)))} ms`)
  })
})

import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { describe, test } from 'node:test'
import { freshDatabaseUrl, testStores } from '../helpers/databases.js'
import { bearer, sleep, strongApiKey } from '../helpers/live-server.js'
import { get, keepGetting, pollUntil, shedCount, type Answer } from '../helpers/overload.js'
import { freePort, serverProcesses } from '../helpers/processes.js'

/** CPU seconds the process's main thread (its event loop) has used, user and system, from /proc. */
function loopCpuSeconds (pid: number): number {
  // "pid (comm) state …": utime and stime are the 14th and 15th fields, in clock ticks (100 a second on Linux)
  const fields = readFileSync(`/proc/${pid}/task/${pid}/stat`, 'utf8').replace(/^.*\) /, '').split(' ')
  return (Number(fields[11]) + Number(fields[12])) / 100
}

// the bound is set low (10 % utilisation) so that this test's ordinary load trips it, on any machine
const OVERLOAD_ENV = { OVERLOAD_SHEDDING: 'true', OVERLOAD_MAX_EVENT_LOOP_UTILIZATION: '10', RATE_LIMIT_MAX: '0', LOG_LEVEL: 'warn' }
const CONCURRENCY = 32

for (const store of testStores()) {
  describe(`load shedding (${store})`, () => {
    test('When the event loop is past its bound, then new requests get 503 overloaded with Retry-After as the document says, /healthz 200, /readyz 503 until the load stops, and each shed request is counted', async (t) => {
      const apiKey = strongApiKey()
      const metricsPort = await freePort()
      const server = await serverProcesses(t).start({ DATABASE_URL: await freshDatabaseUrl(t, store), PETSTORE_API_KEYS: apiKey, METRICS_PORT: String(metricsPort), ...OVERLOAD_ENV })
      const document = JSON.parse((await get(server, '/v1/openapi.json')).body) as {
        paths: Record<string, Record<string, { responses: Record<string, { headers?: Record<string, { schema: { pattern: string } }>, content: Record<string, { schema: { $ref: string } }> }> }>>
        components: { schemas: { Error: { properties: { code: { enum: string[] } } } } }
      }
      assert.equal(await shedCount(metricsPort), 0, 'the counter should read 0 before any shedding')
      // reading the document is work enough to pass a bound this low for one sample
      await pollUntil(server, '/readyz', (answer) => answer.status === 200)

      const load = keepGetting(server, '/v1/pets?limit=100', bearer(apiKey), CONCURRENCY)
      let healthz: Answer[] = []
      let stopped = false
      t.after(async () => { if (!stopped) await load.stop() })
      const shed = await pollUntil(server, '/v1/pets', (answer) => answer.status === 503, async () => {
        healthz.push(await get(server, '/healthz'))
      })
      const readyz = await pollUntil(server, '/readyz', (answer) => answer.status === 503, async () => {
        healthz.push(await get(server, '/healthz'))
      })
      // and it stays 503 while the load goes on: four samples of the loop, each past the bound
      const stillOverloaded: Answer[] = []
      for (const until = Date.now() + 2_000; Date.now() < until; await sleep(100)) stillOverloaded.push(await get(server, '/readyz'))
      assert.deepEqual(stillOverloaded.filter((answer) => answer.status !== 503).map((answer) => `${answer.status} ${answer.body}`), [], '/readyz answered 200 while the load went on')
      stopped = true
      await load.stop()

      // a new connection's request, shed: the Error body and Retry-After, as the document declares them
      assert.deepEqual(JSON.parse(shed.body), { code: 'overloaded', message: 'This instance is overloaded and turned the request away unread; retry after Retry-After seconds.', status: 503 })
      assert.equal(shed.headers['retry-after'], '1')
      // and its connection closed: kept-alive connections must not hold the loop's turns while new clients wait to be accepted
      assert.equal(shed.headers.connection, 'close')
      const declared = document.paths['/pets']?.get?.responses['503']
      assert.ok(declared?.headers?.['Retry-After'] !== undefined, 'listPets declares no Retry-After on its 503')
      assert.match(shed.headers['retry-after'], new RegExp(declared.headers['Retry-After'].schema.pattern))
      assert.equal(declared.content['application/json']?.schema.$ref, '#/components/schemas/Error')
      assert.ok(document.components.schemas.Error.properties.code.enum.includes('overloaded'))
      assert.ok(document.paths['/openapi.json']?.get?.responses['503'] !== undefined, 'the document does not declare its own 503')

      // the probes: /healthz never shed, /readyz says why
      assert.ok(healthz.length > 0)
      assert.deepEqual(healthz.filter((answer) => answer.status !== 200), [])
      const readyBody = JSON.parse(readyz.body) as { code: string, message: string }
      assert.equal(readyBody.code, 'overloaded')
      assert.match(readyBody.message, /utilisation \d+% \(bound 10%\).* for 2 samples of 500 ms in a row\.$/)
      assert.equal(readyz.headers['retry-after'], '1')

      // the load gone, the instance is ready again and serves
      healthz = []
      await pollUntil(server, '/readyz', (answer) => answer.status === 200)
      assert.equal((await get(server, '/v1/pets', bearer(apiKey))).status, 200)

      // every shed answer the clients got is counted, and only those
      const overloaded = [...load.answers, shed].filter((answer) => answer.status === 503 && (JSON.parse(answer.body) as { code: string }).code === 'overloaded')
      assert.ok(load.answers.some((answer) => answer.status === 200), 'the load got no 200 before it was shed')
      assert.deepEqual([...new Set(load.answers.map((answer) => answer.status))].sort(), [200, 503])
      assert.deepEqual(load.answers.filter((answer) => answer.status === 503 && answer.headers.connection !== 'close'), [], 'a shed answer kept its connection open')
      const shedTotal = await shedCount(metricsPort)
      assert.equal(shedTotal, overloaded.length, 'petstore_overload_shed_total should count every shed answer')
      t.diagnostic(`${store}: ${load.answers.length} listPets under load, ${overloaded.length - 1} shed; counter ${shedTotal}`)
    })
  })
}

describe('load shedding switched off', () => {
  test('When OVERLOAD_SHEDDING=false, then the same load past the same bound gets no 503 and /readyz stays 200', async (t) => {
    const apiKey = strongApiKey()
    const server = await serverProcesses(t).start({ DATABASE_URL: await freshDatabaseUrl(t, 'sqlite'), PETSTORE_API_KEYS: apiKey, ...OVERLOAD_ENV, OVERLOAD_SHEDDING: 'false' })
    const load = keepGetting(server, '/v1/pets?limit=100', bearer(apiKey), CONCURRENCY)
    const readyz: Answer[] = []
    const cpuBefore = loopCpuSeconds(server.pid)
    const started = Date.now()
    let cpuShare = 0
    try {
      // three seconds: six samples of the loop, each past the bound
      const until = Date.now() + 3_000
      while (Date.now() < until) {
        readyz.push(await get(server, '/readyz'))
        await sleep(100)
      }
      cpuShare = (loopCpuSeconds(server.pid) - cpuBefore) / ((Date.now() - started) / 1000)
    } finally {
      await load.stop()
    }
    // the bound was passed: the loop's thread ran on a CPU for more than 10 % of the time, so its loop was busy at least that long
    assert.ok(cpuShare > 0.1, `the server's event loop ran ${Math.round(cpuShare * 100)} % of the time, which does not show the 10 % bound was passed`)
    t.diagnostic(`the server's event loop ran ${Math.round(cpuShare * 100)} % of the time under the load`)
    assert.ok(load.answers.length > CONCURRENCY)
    assert.deepEqual(load.answers.filter((answer) => answer.status !== 200).map((answer) => answer.body), [])
    assert.deepEqual(readyz.filter((answer) => answer.status !== 200).map((answer) => answer.body), [])
  })
})

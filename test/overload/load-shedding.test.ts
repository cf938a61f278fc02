import assert from 'node:assert/strict'
import { Agent, request } from 'node:http'
import { describe, test } from 'node:test'
import { freshDatabaseUrl, testStores } from '../helpers/databases.js'
import { bearer, sleep, strongApiKey } from '../helpers/live-server.js'
import { freePort, serverProcesses, type ServerProcess } from '../helpers/processes.js'

/** One answer as the client read it. */
interface Answer {
  status: number
  headers: Record<string, string | string[] | undefined>
  body: string
}

/** GET `path` on the server; a fresh connection unless `agent` keeps one alive. */
async function get (server: ServerProcess, path: string, headers: Record<string, string> = {}, agent: Agent | false = false): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port: server.port, path, headers, agent }, (res) => {
      let body = ''
      res.setEncoding('utf8').on('data', (chunk: string) => { body += chunk }).on('end', () => { resolve({ status: res.statusCode ?? 0, headers: res.headers, body }) })
    })
    req.setTimeout(20_000, () => { req.destroy(new Error(`GET ${path} got no answer in 20 s`)) })
    req.on('error', reject).end()
  })
}

async function shedCount (metricsPort: number): Promise<number> {
  const text = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text()
  const match = /^petstore_overload_shed_total (\d+)$/m.exec(text)
  assert.ok(match !== null, 'petstore_overload_shed_total is not exported')
  return Number(match[1])
}

/** Keeps `concurrency` listPets in flight on kept-alive connections until stopped; every answer is kept. */
function loadListPets (server: ServerProcess, apiKey: string, concurrency: number): { answers: Answer[], stop: () => Promise<void> } {
  const agent = new Agent({ keepAlive: true, maxSockets: concurrency })
  const answers: Answer[] = []
  const state = { running: true }
  const loops = Array.from({ length: concurrency }, async () => {
    while (state.running) answers.push(await get(server, '/v1/pets?limit=100', bearer(apiKey), agent))
  })
  return {
    answers,
    stop: async () => {
      state.running = false
      await Promise.all(loops)
      agent.destroy()
    }
  }
}

/** Polls until `until` holds of an answer of `path` (on a fresh connection each time), for at most 20 s (a bound against a hang). */
async function pollUntil (server: ServerProcess, path: string, until: (answer: Answer) => boolean, each: () => Promise<void> = async () => {}): Promise<Answer> {
  const deadline = Date.now() + 20_000
  for (;;) {
    await each()
    const answer = await get(server, path)
    if (until(answer)) return answer
    assert.ok(Date.now() < deadline, `${path} never answered as expected; last: ${answer.status} ${answer.body}`)
    await sleep(100)
  }
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

      const load = loadListPets(server, apiKey, CONCURRENCY)
      let healthz: Answer[] = []
      let stopped = false
      t.after(async () => { if (!stopped) await load.stop() })
      const shed = await pollUntil(server, '/v1/pets', (answer) => answer.status === 503, async () => {
        healthz.push(await get(server, '/healthz'))
      })
      const readyz = await pollUntil(server, '/readyz', (answer) => answer.status === 503, async () => {
        healthz.push(await get(server, '/healthz'))
      })
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
      assert.match(readyBody.message, /utilisation \d+% \(bound 10%\)/)
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
    const load = loadListPets(server, apiKey, CONCURRENCY)
    const readyz: Answer[] = []
    try {
      // three seconds: six samples of the loop, each past the bound
      const until = Date.now() + 3_000
      while (Date.now() < until) {
        readyz.push(await get(server, '/readyz'))
        await sleep(100)
      }
    } finally {
      await load.stop()
    }
    assert.ok(load.answers.length > CONCURRENCY)
    assert.deepEqual(load.answers.filter((answer) => answer.status !== 200).map((answer) => answer.body), [])
    assert.deepEqual(readyz.filter((answer) => answer.status !== 200).map((answer) => answer.body), [])
  })
})

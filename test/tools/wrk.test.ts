import assert from 'node:assert/strict'
import { createServer, type Server } from 'node:http'
import { describe, test } from 'node:test'
import { IdSequence } from '../../tools/harness/id-sequence.js'
import { runAutocannonLoad } from '../../tools/harness/load-generator.js'
import type { LoadResult, LoadSpec } from '../../tools/harness/load-spec.js'
import { hasWrk, parseWrkOutput, runWrk, wrkScript } from '../../tools/harness/wrk.js'

const REPORT = `Running 2s test @ http://127.0.0.1:40000/
  1 threads and 50 connections
  Thread Stats   Avg      Stdev     Max   +/- Stdev
    Latency     4.07ms    6.10ms  91.43ms   97.89%
    Req/Sec    11.15k     0.52k   11.62k    90.00%
  Latency Distribution
     50%  591.00us
     75%    4.28ms
     90%    6.95ms
     99%    1.21s
  22296 requests in 2.00s, 65.78MB read
  Socket errors: connect 0, read 2, write 0, timeout 3
  Non-2xx or 3xx responses: 7
Requests/sec:  11138.36
Transfer/sec:     32.86MB
`

describe('wrk wrapper', () => {
  test('When wrk prints its --latency report, then requests, req/s, percentiles in ms, errors and non-2xx answers are read from it', () => {
    const result = parseWrkOutput(REPORT)

    assert.deepEqual(result, {
      generator: 'wrk',
      requests: 22296,
      durationSeconds: 2,
      reqPerSec: 11138.36,
      latencyMs: { p50: 0.591, p90: 6.95, p99: 1210 },
      non2xx: 7,
      errors: 5,
      timeouts: 3,
      countedIds: 0
    })
  })

  test('When the report has no latency distribution (no --latency), then parsing fails saying so', () => {
    assert.throws(() => parseWrkOutput(REPORT.replace(/ {2}Latency Distribution[\s\S]*?(?= {2}\d+ requests)/, '')), /50% latency/)
  })

  test('When a load has one fixed request, then the script sets it on wrk itself; with several, a request function takes them in turn', () => {
    const one = wrkScript({ origin: 'http://127.0.0.1:1', headers: { authorization: 'Bearer k' }, requests: [{ method: 'POST', path: '/v1/pets', body: '{"name":"Rex"}' }], connections: 1, durationSeconds: 1 })
    const several = wrkScript({
      origin: 'http://127.0.0.1:1',
      headers: { authorization: 'Bearer k' },
      requests: [{ method: 'GET', path: '/v1/pets' }, { method: 'GET', path: '/v1/pets/', randomIdRange: [1, 9] }],
      connections: 1,
      durationSeconds: 1
    })

    assert.match(one, /^wrk\.method = "POST"$/m)
    assert.match(one, /^wrk\.body = "\{\\"name\\":\\"Rex\\"\}"$/m)
    assert.match(one, /^wrk\.headers\["Content-Type"\] = "application\/json"$/m)
    assert.doesNotMatch(one, /request = function/)
    assert.match(several, /request = function/)
    assert.match(several, /min = 1, max = 9/)
  })

  test('When the script counts ids, then wrk\'s report carries how many it drew', () => {
    assert.equal(parseWrkOutput(`${REPORT}Counted ids: 22347\n`).countedIds, 22347)
  })
})

/** A receiver that answers 201 to everything and keeps every request's body. */
async function recordingServer (): Promise<{ server: Server, origin: string, bodies: string[] }> {
  const bodies: string[] = []
  const server = createServer((request, response) => {
    const chunks: Buffer[] = []
    request.on('data', (chunk: Buffer) => chunks.push(chunk))
    request.on('end', () => {
      bodies.push(Buffer.concat(chunks).toString('utf8'))
      response.writeHead(201, { 'content-type': 'application/json' }).end('{}')
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const address = server.address()
  if (address === null || typeof address === 'string') throw new Error('the receiver has no port')
  return { server, origin: `http://127.0.0.1:${address.port}`, bodies }
}

/** Two loads in a row from one sequence, with a counting body among other requests; the bodies the receiver got. */
async function countedLoads (run: (spec: LoadSpec) => Promise<LoadResult>, ids: IdSequence): Promise<{ bodies: string[], results: LoadResult[] }> {
  const { server, origin, bodies } = await recordingServer()
  try {
    const spec: LoadSpec = {
      origin,
      headers: { authorization: 'Bearer k' },
      requests: [{ method: 'POST', path: '/v1/pets', body: '{"name":"Rex"}' }, { method: 'POST', path: '/v1/store/orders', countingBody: { before: '{"petId":', after: '}', ids } }],
      connections: 8,
      durationSeconds: 1
    }
    const results = [await run(spec), await run(spec)]
    return { bodies, results }
  } finally {
    server.closeAllConnections()
    await new Promise((resolve) => server.close(resolve))
  }
}

function assertDistinctIdsFrom (first: number, ids: IdSequence, bodies: string[], results: LoadResult[]): void {
  const petIds = bodies.filter((body) => body.includes('petId')).map((body) => (JSON.parse(body) as { petId: number }).petId)
  assert.ok(petIds.length > 100, `only ${petIds.length} orders arrived`)
  assert.equal(new Set(petIds).size, petIds.length, 'an id was sent twice')
  assert.ok(petIds.every((id) => Number.isInteger(id) && id >= first && id < ids.next), `an id outside ${first}..${ids.next - 1}`)
  assert.equal(ids.next, first + results.reduce((sum, result) => sum + result.countedIds, 0))
  assert.ok(results.every((result) => result.countedIds >= 1))
  // the other request of the mix keeps its fixed body
  assert.ok(bodies.some((body) => body === '{"name":"Rex"}'))
}

describe('a counting body', () => {
  test('When wrk runs a load with a counting body twice from one sequence, then every order has its own id, from the first on, and the sequence moves past what was drawn',
    { skip: hasWrk() ? false : 'wrk is not installed' }, async () => {
      const ids = new IdSequence(1_000_001, 9_999_999)

      const { bodies, results } = await countedLoads(runWrk, ids)

      assertDistinctIdsFrom(1_000_001, ids, bodies, results)
    })

  test('When autocannon runs a load with a counting body twice from one sequence, then every order has its own id, from the first on, and the sequence moves past what was drawn', async () => {
    const ids = new IdSequence(500, 9_999_999)

    const { bodies, results } = await countedLoads(runAutocannonLoad, ids)

    assertDistinctIdsFrom(500, ids, bodies, results)
  })

  test('When a load draws ids past the last of its sequence, then taking them fails saying so', () => {
    const ids = new IdSequence(10, 19, 'seed more orderable pets')

    assert.equal(ids.take(4), 10)
    assert.throws(() => ids.take(7), /drew ids up to 20, past the last, 19: seed more orderable pets/)
  })
})

import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { parseWrkOutput, wrkScript } from '../../tools/harness/wrk.js'

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
      timeouts: 3
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
})

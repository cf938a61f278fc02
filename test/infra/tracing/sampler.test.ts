import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { describe, test, type TestContext } from 'node:test'
import { OtlpReceiver, type ReceivedSpan } from '../../../tools/harness/otlp-receiver.js'
import { freshDatabaseUrl, testStores, type StoreKind } from '../../helpers/databases.js'
import { serverProcesses, type ServerProcess } from '../../helpers/processes.js'

const KEY = `sampler_${randomBytes(24).toString('base64url')}`

/** A caller's W3C trace context, sampled or not. */
function callerContext (sampled: boolean): { traceId: string, spanId: string, traceparent: string } {
  const traceId = randomBytes(16).toString('hex')
  const spanId = randomBytes(8).toString('hex')
  return { traceId, spanId, traceparent: `00-${traceId}-${spanId}-${sampled ? '01' : '00'}` }
}

async function listPets (server: ServerProcess, traceparent?: string): Promise<void> {
  const res = await fetch(`${server.baseUrl}/v1/pets`, { headers: { authorization: `Bearer ${KEY}`, ...(traceparent === undefined ? {} : { traceparent }) } })
  assert.equal(res.status, 200)
  await res.arrayBuffer()
}

/**
 * The spans exported up to a marker: a request under a sampled caller's trace, whose span arrives after
 * every span of the requests made before it (one batch processor, first in, first out). A sampler that
 * is not parent-based decides a marker by its trace id like any request, so it then takes several
 * markers: the first one traced is enough (with a ratio of 0.5 and 30 markers, none is traced with a
 * probability of 1e-9).
 */
async function spansUpTo (server: ServerProcess, receiver: OtlpReceiver, markers = 1): Promise<ReceivedSpan[]> {
  const markerTraces = new Set<string>()
  for (let i = 0; i < markers; i++) {
    const marker = callerContext(true)
    markerTraces.add(marker.traceId)
    await listPets(server, marker.traceparent)
  }
  const spans = await receiver.waitFor((received) => received.some((span) => markerTraces.has(span.traceId)))
  return spans.filter((span) => !markerTraces.has(span.traceId))
}

/** A server on a fresh store (SQLite by default) exporting its spans to a receiver of its own every 100 ms, with `env`'s sampler. */
async function tracedServer (t: TestContext, env: Record<string, string>, store: StoreKind = 'sqlite'): Promise<{ receiver: OtlpReceiver, server: ServerProcess }> {
  const receiver = await OtlpReceiver.start()
  t.after(() => receiver.close())
  const server = await serverProcesses(t).start({
    ...env,
    DATABASE_URL: await freshDatabaseUrl(t, store),
    PETSTORE_API_KEYS: KEY,
    OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint,
    OTEL_BSP_SCHEDULE_DELAY: '100'
  })
  return { receiver, server }
}

describe('trace sampling (OTEL_TRACES_SAMPLER, OTEL_TRACES_SAMPLER_ARG)', () => {
  test('When the sampler is parentbased_traceidratio with a ratio of 0, then requests without a traceparent send no span, and a caller\'s sampled traceparent is still followed', async (t) => {
    const { receiver, server } = await tracedServer(t, { OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: '0' })

    for (let i = 0; i < 20; i++) await listPets(server)
    const unsampledCaller = callerContext(false)
    await listPets(server, unsampledCaller.traceparent)
    const sampledCaller = callerContext(true)
    await listPets(server, sampledCaller.traceparent)

    // the sampled caller's request, and its store call when the page was read again (a cached page lives at most 1 s)
    const spans = await spansUpTo(server, receiver)
    assert.deepEqual(new Set(spans.map((span) => span.traceId)), new Set([sampledCaller.traceId]), JSON.stringify(spans, null, 1))
    const requestSpans = spans.filter((span) => span.name === 'GET /v1/pets')
    assert.deepEqual(requestSpans.map((span) => span.parentSpanId), [sampledCaller.spanId], JSON.stringify(spans, null, 1))
    assert.deepEqual(spans.filter((span) => span.name !== 'GET /v1/pets').map((span) => [span.name, span.parentSpanId]),
      spans.length === 1 ? [] : [['store.listPets', requestSpans[0]?.spanId]], JSON.stringify(spans, null, 1))
  })

  test('When the sampler is the default (parentbased_always_on), then every request without a traceparent is traced, and a caller\'s unsampled traceparent is followed: no span', async (t) => {
    const { receiver, server } = await tracedServer(t, {})

    for (let i = 0; i < 5; i++) await listPets(server)
    const unsampledCaller = callerContext(false)
    await listPets(server, unsampledCaller.traceparent)

    const requestSpans = (await spansUpTo(server, receiver)).filter((span) => span.name === 'GET /v1/pets')
    assert.equal(requestSpans.length, 5)
    assert.ok(requestSpans.every((span) => span.traceId !== unsampledCaller.traceId && span.parentSpanId === ''))
  })

  // the one decision that reaches the store's spans (and on PostgreSQL pg's own): on each store
  for (const store of testStores()) {
    test(`When the sampler is traceidratio with a ratio of 0.5, then about half of the new traces are sent, each whole (its store call's span too) (${store})`, async (t) => {
      const { receiver, server } = await tracedServer(t, { OTEL_TRACES_SAMPLER: 'traceidratio', OTEL_TRACES_SAMPLER_ARG: '0.5' }, store)

      // getPet of a pet that is not there: a 404 after one store call, so every traced request has two spans
      const requests = 200
      for (let i = 0; i < requests; i++) {
        const res = await fetch(`${server.baseUrl}/v1/pets/${1_000_000 + i}`, { headers: { authorization: `Bearer ${KEY}` } })
        assert.equal(res.status, 404)
        await res.arrayBuffer()
      }

      const spans = await spansUpTo(server, receiver, 30)
      const requestSpans = spans.filter((span) => span.name === 'GET /v1/pets/:petId')
      // binomial(200, 0.5): outside 60..140 with a probability below 1e-8
      assert.ok(requestSpans.length >= 60 && requestSpans.length <= 140, `${requestSpans.length} of ${requests} requests were traced`)
      // a new trace's store spans follow its request's decision, not a second draw on the trace id
      const storeSpanTraces = new Set(spans.filter((span) => span.name.startsWith('store.')).map((span) => span.traceId))
      assert.deepEqual(requestSpans.filter((span) => !storeSpanTraces.has(span.traceId)).map((span) => span.traceId), [])
      const requestTraces = new Set(requestSpans.map((span) => span.traceId))
      assert.deepEqual([...storeSpanTraces].filter((traceId) => !requestTraces.has(traceId)), [], 'a store span in a trace whose request was not sent')
      if (store === 'postgres') {
        // pg's query spans too: in every trace sent, and in no other
        const querySpanTraces = new Set(spans.filter((span) => span.name.startsWith('pg.query:')).map((span) => span.traceId))
        assert.deepEqual([...requestTraces].filter((traceId) => !querySpanTraces.has(traceId)), [], 'a trace sent without its query span')
        assert.deepEqual([...querySpanTraces].filter((traceId) => !requestTraces.has(traceId)), [], 'a query span in a trace whose request was not sent')
      }
    })
  }

  const wrong: Array<Record<string, string>> = [
    { OTEL_TRACES_SAMPLER: 'jaeger_remote' },
    { OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: '10%' },
    { OTEL_TRACES_SAMPLER: 'traceidratio', OTEL_TRACES_SAMPLER_ARG: '1.5' },
    { OTEL_TRACES_SAMPLER: 'always_on', OTEL_TRACES_SAMPLER_ARG: '0.1' }
  ]
  test('When OTEL_TRACES_SAMPLER or its argument is wrong, then the service does not start and says which variable', async (t) => {
    const servers = serverProcesses(t)
    const results = await Promise.all(wrong.map(async (env) => {
      const server = await servers.spawn({ ...env, DATABASE_URL: 'sqlite::memory:', PETSTORE_API_KEYS: KEY, OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318' })
      return { env, server, exit: await server.waitForExit(15_000) }
    }))

    for (const { env, server, exit } of results) {
      const variable = 'OTEL_TRACES_SAMPLER_ARG' in env ? 'OTEL_TRACES_SAMPLER_ARG' : 'OTEL_TRACES_SAMPLER'
      assert.deepEqual(exit, { code: 1, signal: null }, JSON.stringify(env))
      assert.match(server.stderr.trimEnd(), new RegExp(`^petstore: configuration error: ${variable} `), JSON.stringify(env))
      assert.equal(server.stdout, '')
    }
  })
})

import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { describe, test } from 'node:test'
import { generateApiKey, hashApiKey } from '../../../src/capabilities/keys/api-keys.js'
import { loadConfig } from '../../../src/infra/config/config.js'
import { openDatabase } from '../../../src/infra/database/open-database.js'
import { systemClock } from '../../../src/infra/runtime/clock.js'
import { createKeyStore } from '../../../src/capabilities/keys/store/create-key-store.js'
import { OtlpReceiver, type ReceivedSpan } from '../../../tools/harness/otlp-receiver.js'
import { freshDatabaseUrl, testStores } from '../../helpers/databases.js'
import { serverProcesses } from '../../helpers/processes.js'

/** A caller's W3C trace context: the ids the service must continue. */
function callerContext (): { traceId: string, spanId: string, traceparent: string } {
  const traceId = randomBytes(16).toString('hex')
  const spanId = randomBytes(8).toString('hex')
  return { traceId, spanId, traceparent: `00-${traceId}-${spanId}-01` }
}

/** True when `span` descends from the span `ancestorId` within `spans`. */
function descendsFrom (span: ReceivedSpan, ancestorId: string, spans: readonly ReceivedSpan[]): boolean {
  const parents = new Map(spans.map((candidate) => [candidate.spanId, candidate.parentSpanId]))
  for (let parentId = span.parentSpanId, depth = 0; parentId !== '' && depth < spans.length; parentId = parents.get(parentId) ?? '', depth++) {
    if (parentId === ancestorId) return true
  }
  return false
}

/** Creates a key in the store before the server starts, as `keys create` does. */
async function createKey (databaseUrl: string, name: string): Promise<string> {
  const key = generateApiKey()
  const { database } = await openDatabase(loadConfig({ DATABASE_URL: databaseUrl }).database)
  try {
    await createKeyStore(database, systemClock).createApiKey(name, hashApiKey(key), 'write')
  } finally {
    await database.close()
  }
  return key
}

for (const store of testStores()) {
  describe(`OpenTelemetry traces (${store})`, () => {
    test('When OTEL_EXPORTER_OTLP_ENDPOINT is set, then a request\'s spans reach the receiver under the caller\'s traceparent, with its route, operation, status and key name, child spans for the store, and the trace id on the access line', async (t) => {
      const servers = serverProcesses(t)
      const receiver = await OtlpReceiver.start()
      t.after(() => receiver.close())
      const databaseUrl = await freshDatabaseUrl(t, store)
      const key = await createKey(databaseUrl, 'back-office')
      const server = await servers.start({
        DATABASE_URL: databaseUrl,
        OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint,
        OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
        // export every 100 ms instead of every 5 s
        OTEL_BSP_SCHEDULE_DELAY: '100'
      })
      const caller = callerContext()

      const res = await fetch(`${server.baseUrl}/v1/pets`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', traceparent: caller.traceparent },
        body: JSON.stringify({ name: 'Rex', categoryId: 1 })
      })

      assert.equal(res.status, 201)
      const inTrace = (spans: readonly ReceivedSpan[]): ReceivedSpan[] => spans.filter((span) => span.traceId === caller.traceId)
      const spans = inTrace(await receiver.waitFor((received) => inTrace(received).some((span) => span.name === 'store.createPet') &&
        inTrace(received).some((span) => span.parentSpanId === caller.spanId)))
      const requestSpan = spans.find((span) => span.parentSpanId === caller.spanId)
      assert.ok(requestSpan !== undefined, 'no span is a child of the caller\'s span')
      assert.equal(requestSpan.name, 'POST /v1/pets')
      assert.equal(requestSpan.serviceName, 'petstore')
      assert.deepEqual({
        route: requestSpan.attributes['http.route'],
        method: requestSpan.attributes['http.request.method'],
        status: requestSpan.attributes['http.response.status_code'],
        operation: requestSpan.attributes['petstore.operation_id'],
        keyName: requestSpan.attributes['petstore.api_key.name'],
        keyRole: requestSpan.attributes['petstore.api_key.role']
      }, { route: '/v1/pets', method: 'POST', status: 201, operation: 'createPet', keyName: 'back-office', keyRole: 'write' })
      for (const name of ['store.findActiveApiKeyByHash', 'store.createPet']) {
        const storeSpan = spans.find((span) => span.name === name)
        assert.ok(storeSpan !== undefined && descendsFrom(storeSpan, requestSpan.spanId, spans), `${name} is not a child of the request's span: ${JSON.stringify(spans, null, 1)}`)
      }
      if (store === 'postgres') {
        // pg's instrumentation names a prepared statement's span after it (insertPets, src/capabilities/pets/store/postgres-sql.ts)
        const querySpan = spans.find((span) => span.name.startsWith('pg.query:petstore-insert-pets'))
        assert.ok(querySpan !== undefined && descendsFrom(querySpan, requestSpan.spanId, spans), `no pg query span of the insert below the request: ${JSON.stringify(spans.map((span) => span.name))}`)
      }
      assert.ok(receiver.bodies.every((body) => !body.includes(key) && !body.includes(hashApiKey(key))), 'an export carried the key or its hash')
      // log lines are written in batches, on a timer (test/bin/server.test.ts checks it): wait for this one
      await server.waitForStdout(/"method":"POST".*"msg":"request completed"/)
      const accessLine = server.stdout.split('\n').filter((line) => line.includes('"msg":"request completed"')).map((line) => JSON.parse(line) as Record<string, unknown>)
        .find((line) => line.method === 'POST')
      assert.equal(accessLine?.traceId, caller.traceId)
      assert.equal((await server.stop()).code, 0, 'with tracing on, SIGTERM still closes the service cleanly')
    })
  })
}

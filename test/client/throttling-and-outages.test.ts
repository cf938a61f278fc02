import assert from 'node:assert/strict'
import { describe, test, type TestContext } from 'node:test'
import { Database } from '../../src/infra/database/sqlite/driver.js'
import { createClient, PetStoreError, type RetryEvent } from '@petstore/client'
import { listAllPets, testStores, type StoreKind } from '../helpers/build-app.js'
import { startService, type LiveService, type ServedRequest } from '../helpers/client-service.js'
import { freshDatabaseUrl } from '../helpers/databases.js'
import { startHttpGateway } from '../helpers/http-gateway.js'
import { startTcpProxy } from '../helpers/tcp-proxy.js'

/** Asserts that `retry` reached the service no earlier than `answer`'s Retry-After allowed. */
function assertWaitedRetryAfter (answer: ServedRequest | undefined, retry: ServedRequest | undefined): void {
  assert.ok(answer !== undefined && retry !== undefined, 'an answer with Retry-After and its retry')
  const asked = Number(answer.retryAfter) * 1000
  const waited = retry.arrivedAt - answer.answeredAt
  assert.ok(Number.isInteger(asked) && waited >= asked, `retried ${waited.toFixed(0)} ms after Retry-After: ${String(answer.retryAfter)}`)
}

describe('429 rate_limited', () => {
  test('When a call goes over the rate limit, then the client waits the Retry-After and the retry succeeds', async (t) => {
    const service = await startService(t, { env: { RATE_LIMIT_MAX: '2', RATE_LIMIT_WINDOW: '1' } })
    const retries: RetryEvent[] = []
    const client = createClient({ baseUrl: service.baseUrl, apiKey: service.key, onRetry: (event) => { retries.push(event) } })

    // a fixed window of 1 s: a few calls in a row are enough to cross the quota
    for (let call = 0; call < 10 && !service.served.some((r) => r.status === 429); call++) await client.listPets()

    const limited = service.served.findIndex((r) => r.status === 429)
    assert.ok(limited >= 2, 'the third request of a window is refused')
    assert.equal(service.served[limited + 1]?.status, 200)
    assertWaitedRetryAfter(service.served[limited], service.served[limited + 1])
    assert.equal(retries[0]?.error.code, 'rate_limited')
    assert.equal(retries[0]?.error.status, 429)
    assert.equal(retries[0]?.error.retryAfterMs, Number(service.served[limited]?.retryAfter) * 1000)
    assert.ok(Number(retries[0]?.delayMs) >= Number(retries[0]?.error.retryAfterMs))
  })

  test('When Retry-After is longer than maxRetryDelayMs, then the 429 is thrown at once with retryAfterMs', async (t) => {
    const service = await startService(t, { env: { RATE_LIMIT_MAX: '1', RATE_LIMIT_WINDOW: '60' } })
    const client = createClient({ baseUrl: service.baseUrl, apiKey: service.key, maxRetryDelayMs: 5_000 })
    await client.createPet({ name: 'Rex', categoryId: 1 })
    const started = performance.now()

    const error = await client.createPet({ name: 'Bella', categoryId: 1 }).then(() => assert.fail('the call succeeded'), (e: unknown) => e)

    assert.ok(error instanceof PetStoreError)
    assert.equal(error.code, 'rate_limited')
    assert.equal(error.status, 429)
    assert.equal(error.attempts, 1)
    assert.ok(Number(error.retryAfterMs) > 5_000, `retryAfterMs ${String(error.retryAfterMs)}`)
    // the bound is the behaviour: no wait; waiting would take the Retry-After, about 60 s (and more than
    // maxRetryDelayMs, 5 s, in any case); the rest is room for a loaded machine
    assert.ok(performance.now() - started < 5_000, `thrown ${(performance.now() - started).toFixed(0)} ms after the call: the client waited`)
    // read from the store: the key is over its limit for the next minute
    assert.equal((await service.app.petStore.listPets({ limit: 100 })).pets.length, 1)
  })
})

/** The service on a store the test can make unavailable, and end that outage from inside the service. */
interface ServiceWithOutage {
  service: LiveService
  begin: () => void
  end: () => void
}

/**
 * SQLite: another connection holds the write lock (the service answers 503 after its 250 ms busy
 * timeout). PostgreSQL: the connection to it is refused through a TCP proxy. The outage ends
 * when the service sends its first 503.
 */
async function serviceWithOutage (t: TestContext, store: StoreKind): Promise<ServiceWithOutage> {
  const endOnFirst503 = (end: () => void) => (app: LiveService['app']) => {
    app.addHook('onResponse', async (_request, reply) => { if (reply.statusCode === 503) end() })
  }
  if (store === 'sqlite') {
    let lock: InstanceType<typeof Database> | undefined
    const end = (): void => { lock?.close(); lock = undefined }
    t.after(end)
    const service = await startService(t, { store }, endOnFirst503(end))
    return {
      service,
      begin: () => {
        lock = new Database(service.databaseUrl.slice('sqlite:'.length))
        lock.exec('BEGIN IMMEDIATE')
      },
      end
    }
  }
  const direct = new URL(await freshDatabaseUrl(t, 'postgres'))
  const proxy = await startTcpProxy(t, { host: direct.hostname, port: direct.port === '' ? 5432 : Number(direct.port) })
  const viaProxy = new URL(direct)
  viaProxy.hostname = '127.0.0.1'
  viaProxy.port = String(proxy.port)
  const end = (): void => { proxy.heal() }
  const service = await startService(t, { databaseUrl: viaProxy.toString(), env: { DATABASE_TIMEOUT_MS: '500' } }, endOnFirst503(end))
  return { service, begin: () => { proxy.cut('refuse') }, end }
}

for (const store of testStores()) {
  describe(`503 service_unavailable (${store})`, () => {
    test('When the store is unavailable for a moment, then createPet retries after Retry-After and exactly one pet exists', async (t) => {
      const { service, begin } = await serviceWithOutage(t, store)
      const client = createClient({ baseUrl: service.baseUrl, apiKey: service.key })
      await client.listPets()
      begin()

      const pet = await client.createPet({ name: 'Rex', categoryId: 1 })

      const creates = service.served.filter((r) => r.method === 'POST')
      assert.deepEqual(creates.map((r) => r.status), [503, 201])
      assert.equal(creates[0]?.retryAfter, '1')
      assert.equal(creates[1]?.idempotencyKey, creates[0]?.idempotencyKey)
      assertWaitedRetryAfter(creates[0], creates[1])
      assert.deepEqual(await listAllPets(service), [pet])
    })

    test('When the store is unavailable for a moment, then updatePet retries after Retry-After, and the pet is changed', async (t) => {
      const { service, begin } = await serviceWithOutage(t, store)
      const client = createClient({ baseUrl: service.baseUrl, apiKey: service.key })
      const rex = await client.createPet({ name: 'Rex', categoryId: 1 })
      begin()

      const { pet } = await client.updatePet(rex.id, { status: 'sold' })

      const patches = service.served.filter((r) => r.method === 'PATCH')
      assert.deepEqual(patches.map((r) => r.status), [503, 200])
      assertWaitedRetryAfter(patches[0], patches[1])
      assert.deepEqual(pet, { ...rex, status: 'sold' })
      assert.deepEqual(await listAllPets(service), [pet])
    })
  })
}

describe('answers from a gateway in front of the service', () => {
  test('When a gateway answers 503 with an HTML page and an HTTP-date Retry-After, then listPets waits until that date and retries', async (t) => {
    const service = await startService(t)
    const retryAt = new Date(Math.ceil((Date.now() + 1_500) / 1000) * 1000)
    const gateway = await startHttpGateway(t, service.port, (_request, index) => index > 0
      ? undefined
      : { status: 503, headers: { 'content-type': 'text/html', 'retry-after': retryAt.toUTCString() }, body: '<h1>503 Service Unavailable</h1>' })
    const retries: RetryEvent[] = []
    const client = createClient({ baseUrl: gateway.baseUrl, apiKey: service.key, onRetry: (event) => { retries.push(event) } })

    const page = await client.listPets()

    assert.deepEqual(page, { pets: [] })
    assert.equal(retries.length, 1)
    assert.equal(retries[0]?.error.code, 'unexpected_response')
    assert.equal(retries[0]?.error.status, 503)
    assert.ok(service.served.length === 1 && service.served[0] !== undefined)
    assert.ok(performance.timeOrigin + service.served[0].arrivedAt >= retryAt.getTime(), 'the retry came after the Retry-After date')
  })

  test('When a gateway keeps answering 502 without an Error body, then PetStoreError is unexpected_response with the status and the request id sent', async (t) => {
    const service = await startService(t)
    const gateway = await startHttpGateway(t, service.port, () => ({ status: 502, headers: { 'content-type': 'text/html' }, body: '<h1>Bad Gateway</h1>' }))
    const client = createClient({ baseUrl: gateway.baseUrl, apiKey: service.key, retries: 2, retryBaseDelayMs: 10 })

    const error = await client.listPets({ status: 'sold' }).then(() => assert.fail('the call succeeded'), (e: unknown) => e)

    assert.ok(error instanceof PetStoreError)
    assert.equal(error.code, 'unexpected_response')
    assert.equal(error.status, 502)
    assert.equal(error.attempts, 3)
    assert.match(error.message, /text\/html/)
    assert.equal(gateway.received.length, 3)
    // every attempt of one call carries the same X-Request-Id, and the error names it
    assert.deepEqual(new Set(gateway.received.map((r) => r.headers['x-request-id'])), new Set([error.requestId]))
    assert.equal(gateway.received[0]?.url, '/v1/pets?status=sold')
  })
})

import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { createClient, PetStoreError, type ClientOptions, type PetStoreClient, type RetryEvent } from '@petstore/client'
import { petFingerprint } from '../../src/capabilities/pets/pet-fingerprint.js'
import { IDEMPOTENCY_LEASE_MS, IDEMPOTENCY_TTL_MS } from '../../src/capabilities/idempotency/policy.js'
import { listAllPets, testStores } from '../helpers/build-app.js'
import { startService } from '../helpers/client-service.js'
import { startTcpProxy, type TcpProxy } from '../helpers/tcp-proxy.js'

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/

function clientVia (proxy: TcpProxy, apiKey: string, options: Partial<ClientOptions> = {}): PetStoreClient {
  return createClient({ baseUrl: `http://127.0.0.1:${proxy.port}/v1`, apiKey, retryBaseDelayMs: 20, ...options })
}

async function rejection (promise: Promise<unknown>): Promise<unknown> {
  return promise.then(() => assert.fail('the call succeeded'), (error: unknown) => error)
}

for (const store of testStores()) {
  describe(`createPet retries (${store})`, () => {
    test('When the answer to a create is lost on the way back, then the retry reuses the key and exactly one pet exists', async (t) => {
      let loseTheAnswer = (): void => {}
      let answersLost = 0
      // counted on arrival: whether a request whose connection died reaches onResponse differs between Node versions
      const createsArrived: unknown[] = []
      const service = await startService(t, { store }, (app) => {
        app.addHook('onRequest', async (request) => { if (request.method === 'POST') createsArrived.push(request.headers['idempotency-key']) })
        // the pet is committed and its 201 is about to leave: the connection dies now, so the client never sees it
        app.addHook('onSend', async (request, _reply, payload) => {
          if (request.method === 'POST' && answersLost === 0) {
            answersLost++
            loseTheAnswer()
          }
          return payload
        })
      })
      const proxy = await startTcpProxy(t, { host: '127.0.0.1', port: service.port })
      // resets the client's connection; new ones are forwarded again, so the retry gets through
      loseTheAnswer = () => { proxy.cut('refuse'); proxy.heal() }
      const retries: RetryEvent[] = []
      const client = clientVia(proxy, service.key, { onRetry: (event) => { retries.push(event) } })

      const pet = await client.createPet({ name: 'Rex', categoryId: 1 })

      assert.equal(answersLost, 1)
      assert.equal(retries.length, 1)
      assert.equal(retries[0]?.error.code, 'network_error')
      assert.equal(retries[0]?.error.status, 0)
      assert.equal(createsArrived.length, 2, 'the create whose 201 was lost, and the retry')
      assert.match(String(createsArrived[0]), UUID)
      assert.equal(createsArrived[1], createsArrived[0])
      assert.equal(service.served.filter((r) => r.method === 'POST').at(-1)?.replayed, true, 'the retry is answered with the first create\'s 201')
      assert.deepEqual(await listAllPets(service), [pet])
    })

    test('When a create with the same key is still in flight elsewhere, then the 409 is retried after Retry-After and answered with that create\'s pet', async (t) => {
      const newPet = { name: 'Rex', categoryId: 1, status: 'available' as const }
      const key = 'order-7'
      let scope = ''
      let finishedElsewhere = false
      const service = await startService(t, { store }, (app) => {
        app.addHook('onResponse', async (request, reply) => {
          scope = request.apiKey?.scope ?? scope
          // the other request (another instance, say) finishes while the client waits
          if (reply.statusCode === 409 && !finishedElsewhere) {
            finishedElsewhere = true
            await app.petStore.createPet(newPet, { scope, key, token: 'other-request' })
          }
        })
      })
      const client = createClient({ baseUrl: service.baseUrl, apiKey: service.key })
      await client.listPets()
      const claim = await service.app.idempotencyStore.claimIdempotencyKey({
        scope, key, fingerprint: petFingerprint(newPet), token: 'other-request', now: new Date(), leaseMs: IDEMPOTENCY_LEASE_MS, ttlMs: IDEMPOTENCY_TTL_MS
      })
      assert.equal(claim.outcome, 'claimed')

      const pet = await client.createPet({ name: 'Rex', categoryId: 1 }, { idempotencyKey: key })

      const creates = service.served.filter((r) => r.method === 'POST')
      assert.deepEqual(creates.map((r) => [r.status, r.idempotencyKey, r.replayed]), [[409, key, false], [201, key, true]])
      const [inFlight, replay] = creates as [typeof creates[0], typeof creates[0]]
      assert.equal(inFlight.retryAfter, '1')
      assert.ok(replay.arrivedAt - inFlight.answeredAt >= 1000, `retried ${(replay.arrivedAt - inFlight.answeredAt).toFixed(0)} ms after a Retry-After of 1 s`)
      assert.deepEqual(await listAllPets(service), [pet])
    })
  })
}

describe('requests that get no answer', () => {
  test('When the service cannot be reached, then after the retries PetStoreError is network_error with status 0', async (t) => {
    const service = await startService(t)
    const proxy = await startTcpProxy(t, { host: '127.0.0.1', port: service.port })
    proxy.cut('refuse')

    const error = await rejection(clientVia(proxy, service.key, { retries: 2 }).createPet({ name: 'Rex', categoryId: 1 }))

    assert.ok(error instanceof PetStoreError)
    assert.equal(error.code, 'network_error')
    assert.equal(error.status, 0)
    assert.equal(error.attempts, 3)
    assert.equal(error.operation, 'createPet')
    // no answer, so the id is the one the client sent: the service would have logged it
    assert.match(String(error.requestId), UUID)
    assert.match(error.message, /ECONNRESET|UND_ERR_SOCKET|other side closed/)
    assert.ok(error.cause !== undefined)
    assert.equal(proxy.accepted, 3)
    assert.deepEqual(await listAllPets(service), [])
  })

  test('When the service never answers, then each attempt ends after timeoutMs and the error says so', async (t) => {
    const service = await startService(t)
    const proxy = await startTcpProxy(t, { host: '127.0.0.1', port: service.port })
    proxy.cut('blackhole')

    const error = await rejection(clientVia(proxy, service.key, { retries: 1, timeoutMs: 300 }).listPets())

    assert.ok(error instanceof PetStoreError)
    assert.equal(error.code, 'network_error')
    assert.equal(error.attempts, 2)
    assert.match(error.message, /no answer within 300 ms/)
  })

  test('When the caller aborts while the client waits to retry, then the call rejects at once with the abort reason', async (t) => {
    const service = await startService(t)
    const proxy = await startTcpProxy(t, { host: '127.0.0.1', port: service.port })
    proxy.cut('refuse')
    // the first retry waits at least half the base delay: 30 s
    const client = clientVia(proxy, service.key, { retries: 5, retryBaseDelayMs: 60_000, maxRetryDelayMs: 60_000 })
    const started = performance.now()

    const error = await rejection(client.createPet({ name: 'Rex', categoryId: 1 }, { signal: AbortSignal.timeout(200) }))

    assert.ok(error instanceof DOMException && error.name === 'TimeoutError', `got ${String(error)}`)
    // the bound is the behaviour: the abort ended the wait, which was at least 30 s; 10 s is room for a loaded machine
    assert.ok(performance.now() - started < 10_000, `rejected ${(performance.now() - started).toFixed(0)} ms after the call`)
  })
})

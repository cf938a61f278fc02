import assert from 'node:assert/strict'
import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { describe, test, type TestContext } from 'node:test'
import type { LightMyRequestResponse } from 'fastify'
import { generateApiKey, hashApiKey } from '../../src/capabilities/keys/api-keys.js'
import { securityHeaders } from '../../src/infra/http/security.js'
import { petFingerprint } from '../../src/capabilities/pets/pet-fingerprint.js'
import { stringifyJson } from '../../src/infra/json/exact-json.js'
import { IDEMPOTENCY_LEASE_MS, IDEMPOTENCY_TTL_MS } from '../../src/capabilities/idempotency/policy.js'
import { GET_PET_SUNSET_AT } from '../../src/capabilities/pets/get-pet-deprecation.js'
import { freePort } from '../../tools/harness/free-port.js'
import { ApiFuzzer, type ApiOperation } from '../../tools/fuzz/openapi-fuzzer.js'
import { buildTestApp, tempDir, testStores, type StoreKind, type TestApp } from '../helpers/build-app.js'
import { manualClock, type ManualClock } from '../helpers/clock.js'
import { startPrismProxy, type PrismProxy } from '../helpers/prism.js'
import { WEBHOOK_OPERATIONS, WEBHOOK_TRAFFIC } from '../helpers/webhook-traffic.js'

/** What the traffic's cases share: the app, its clock, and the key they send. */
interface TrafficContext {
  api: TestApp
  clock: ManualClock
  /** `Authorization` with a valid key (an environment key: it works while the store is down). */
  auth: { authorization: string }
  /** `Authorization` with a key no one issued. */
  unknownKey: { authorization: string }
  /** `Authorization` with a valid key of the `read` role. */
  readKey: { authorization: string }
  /** `Authorization` with a valid key of the `admin` role (the webhook endpoints'). */
  adminKey: { authorization: string }
}

/** A request, its path relative to its operation's server (`/pets`, not `/v1/pets`). */
interface Exchange {
  method: string
  path: string
  headers?: Record<string, string>
  body?: string
}

/** One request of the traffic and the documented status it must provoke. */
interface TrafficCase {
  operation: string
  status: number
  what: string
  /** Set-up first; what it changes stays for the cases after it, so the list is in order. */
  before?: (context: TrafficContext) => Promise<void>
  request: (context: TrafficContext) => Exchange
  /** Why this answer is checked against the document here rather than through Prism. */
  direct?: string
}

const MERGE_PATCH_BODY = { 'content-type': 'application/merge-patch+json' }
const JSON_BODY = { 'content-type': 'application/json' }
const REX = JSON.stringify({ name: 'Rex', categoryId: 1 })
const ORDER_WITH_METADATA = JSON.stringify({ petId: 3, metadata: { channel: 'web', coupon: 'X1' } })

/** A case for each operation that takes a key: the same question asked of all of them. */
function forEveryOperation (status: number, what: string, headers: (context: TrafficContext, admin: boolean) => Record<string, string>, before?: TrafficCase['before']): TrafficCase[] {
  const requests: Array<[string, Exchange]> = [
    ['listPets', { method: 'GET', path: '/pets' }],
    ['createPet', { method: 'POST', path: '/pets', headers: JSON_BODY, body: REX }],
    ['getPet', { method: 'GET', path: '/pets/1' }],
    ['updatePet', { method: 'PATCH', path: '/pets/1', headers: MERGE_PATCH_BODY, body: '{"name":"Max"}' }],
    ['listOrders', { method: 'GET', path: '/store/orders' }],
    ['placeOrder', { method: 'POST', path: '/store/orders', headers: JSON_BODY, body: '{"petId":3}' }],
    ['getOrder', { method: 'GET', path: '/store/orders/1' }],
    ['updateOrder', { method: 'PATCH', path: '/store/orders/1', headers: MERGE_PATCH_BODY, body: '{"status":"cancelled"}' }],
    ['getInventory', { method: 'GET', path: '/store/inventory' }],
    ['listEvents', { method: 'GET', path: '/events' }],
    ['getEvent', { method: 'GET', path: '/events/1' }],
    ['listCategories', { method: 'GET', path: '/categories' }],
    ['getCategory', { method: 'GET', path: '/categories/1' }],
    ['putCategory', { method: 'PUT', path: '/categories/1', headers: JSON_BODY, body: '{"name":"Hawk"}' }]
  ]
  const asked: Array<[string, (context: TrafficContext) => Exchange, boolean]> = [
    ...requests.map(([operation, exchange]): [string, () => Exchange, boolean] => [operation, () => exchange, false]),
    ...WEBHOOK_OPERATIONS.map(([operation, exchange]): [string, (context: TrafficContext) => Exchange, boolean] => [operation, exchange, true])
  ]
  return asked.map(([operation, exchangeOf, admin], index) => ({
    operation,
    status,
    what,
    ...(index === 0 && before !== undefined ? { before } : {}),
    request: (context) => {
      const exchange = exchangeOf(context)
      return { ...exchange, headers: { ...exchange.headers, ...headers(context, admin) } }
    }
  }))
}

/**
 * The traffic, in order: each operation, and each status a request can provoke. A new operation
 * adds its cases here (a line each); the coverage check below fails until it does.
 */
const TRAFFIC: TrafficCase[] = [
  { operation: 'createPet', status: 201, what: 'a new pet, with an Idempotency-Key', request: ({ auth }) => ({ method: 'POST', path: '/pets', headers: { ...auth, ...JSON_BODY, 'idempotency-key': 'traffic-1' }, body: REX }) },
  { operation: 'createPet', status: 201, what: 'a replay of it (Idempotent-Replayed)', request: ({ auth }) => ({ method: 'POST', path: '/pets', headers: { ...auth, ...JSON_BODY, 'idempotency-key': 'traffic-1' }, body: REX }) },
  { operation: 'createPet', status: 201, what: 'a second pet, without a key', request: ({ auth }) => ({ method: 'POST', path: '/pets', headers: { ...auth, ...JSON_BODY }, body: JSON.stringify({ name: 'Tom', categoryId: 2, status: 'sold' }) }) },
  { operation: 'listPets', status: 200, what: 'a first page with a next link', request: ({ auth }) => ({ method: 'GET', path: '/pets?limit=1', headers: auth }) },
  { operation: 'listPets', status: 200, what: 'a filtered page', request: ({ auth }) => ({ method: 'GET', path: '/pets?status=sold&limit=100', headers: auth }) },
  { operation: 'getPet', status: 200, what: 'a pet, with its ETag', request: ({ auth }) => ({ method: 'GET', path: '/pets/1', headers: auth }) },
  { operation: 'getPet', status: 304, what: 'a pet that still matches If-None-Match', request: ({ auth }) => ({ method: 'GET', path: '/pets/1', headers: { ...auth, 'if-none-match': '*' } }) },
  { operation: 'listPets', status: 400, what: 'a limit out of range', request: ({ auth }) => ({ method: 'GET', path: '/pets?limit=0', headers: auth }) },
  { operation: 'listPets', status: 400, what: 'an unknown query parameter', request: ({ auth }) => ({ method: 'GET', path: '/pets?status[]=sold', headers: auth }) },
  { operation: 'listPets', status: 400, what: 'a cursor the service did not issue', request: ({ auth }) => ({ method: 'GET', path: '/pets?cursor=abc', headers: auth }) },
  { operation: 'createPet', status: 400, what: 'a body without categoryId', request: ({ auth }) => ({ method: 'POST', path: '/pets', headers: { ...auth, ...JSON_BODY }, body: '{"name":"Rex"}' }) },
  { operation: 'createPet', status: 400, what: 'a malformed Idempotency-Key', request: ({ auth }) => ({ method: 'POST', path: '/pets', headers: { ...auth, ...JSON_BODY, 'idempotency-key': 'has space' }, body: REX }) },
  { operation: 'createPet', status: 400, what: 'a query parameter', request: ({ auth }) => ({ method: 'POST', path: '/pets?dryRun=true', headers: { ...auth, ...JSON_BODY }, body: REX }) },
  {
    operation: 'createPet',
    status: 409,
    what: 'an Idempotency-Key still claimed by a request in flight',
    before: async ({ api, clock, auth }) => {
      await api.app.idempotencyStore.claimIdempotencyKey({
        scope: `env:${hashApiKey(auth.authorization.slice('Bearer '.length)).slice(0, 16)}`,
        key: 'in-flight',
        fingerprint: petFingerprint({ name: 'Rex', categoryId: 1, status: 'available' }),
        token: 'another-request',
        now: new Date(clock.now()),
        leaseMs: IDEMPOTENCY_LEASE_MS,
        ttlMs: IDEMPOTENCY_TTL_MS
      })
    },
    request: ({ auth }) => ({ method: 'POST', path: '/pets', headers: { ...auth, ...JSON_BODY, 'idempotency-key': 'in-flight' }, body: REX })
  },
  { operation: 'createPet', status: 413, what: 'a body over 16 KiB', request: ({ auth }) => ({ method: 'POST', path: '/pets', headers: { ...auth, ...JSON_BODY }, body: JSON.stringify({ name: 'x'.repeat(20_000), categoryId: 1 }) }) },
  { operation: 'createPet', status: 415, what: 'a body that is not JSON', request: ({ auth }) => ({ method: 'POST', path: '/pets', headers: { ...auth, 'content-type': 'text/plain' }, body: 'Rex' }) },
  { operation: 'createPet', status: 415, what: 'a gzip-encoded body', request: ({ auth }) => ({ method: 'POST', path: '/pets', headers: { ...auth, ...JSON_BODY, 'content-encoding': 'gzip' }, body: REX }) },
  { operation: 'createPet', status: 422, what: 'an Idempotency-Key reused with another body', request: ({ auth }) => ({ method: 'POST', path: '/pets', headers: { ...auth, ...JSON_BODY, 'idempotency-key': 'traffic-1' }, body: JSON.stringify({ name: 'Max', categoryId: 1 }) }) },
  { operation: 'getPet', status: 400, what: 'an id that is not an integer', request: ({ auth }) => ({ method: 'GET', path: '/pets/abc', headers: auth }) },
  { operation: 'getPet', status: 404, what: 'an id no pet has', request: ({ auth }) => ({ method: 'GET', path: '/pets/999', headers: auth }) },
  // int64 ids beyond 2^53 in the path only: Prism's document reader (@stoplight/http-spec) caps every int64 at ±(2^53 − 1), and
  // JavaScript forwards bodies through doubles, so it would report an answer carrying 2^63 − 1 (test/routes/pets-int64.test.ts has those)
  { operation: 'getPet', status: 404, what: 'an int64 id beyond 2^53 no pet has', request: ({ auth }) => ({ method: 'GET', path: '/pets/9223372036854775807', headers: auth }) },
  { operation: 'getPet', status: 400, what: 'an id beyond int64', request: ({ auth }) => ({ method: 'GET', path: '/pets/9223372036854775808', headers: auth }) },
  { operation: 'createPet', status: 403, what: 'a read key', request: ({ readKey }) => ({ method: 'POST', path: '/pets', headers: { ...readKey, ...JSON_BODY }, body: REX }) },
  { operation: 'updatePet', status: 403, what: 'a read key', request: ({ readKey }) => ({ method: 'PATCH', path: '/pets/1', headers: { ...readKey, ...MERGE_PATCH_BODY }, body: '{"name":"Max"}' }) },
  { operation: 'updatePet', status: 200, what: 'a status moved (available to pending)', request: ({ auth }) => ({ method: 'PATCH', path: '/pets/1', headers: { ...auth, ...MERGE_PATCH_BODY }, body: '{"status":"pending"}' }) },
  { operation: 'updatePet', status: 400, what: 'a status outside the enum', request: ({ auth }) => ({ method: 'PATCH', path: '/pets/1', headers: { ...auth, ...MERGE_PATCH_BODY }, body: '{"status":"lost"}' }) },
  { operation: 'updatePet', status: 404, what: 'an id no pet has', request: ({ auth }) => ({ method: 'PATCH', path: '/pets/999', headers: { ...auth, ...MERGE_PATCH_BODY }, body: '{"name":"Max"}' }) },
  { operation: 'updatePet', status: 409, what: 'a sold pet made available', request: ({ auth }) => ({ method: 'PATCH', path: '/pets/2', headers: { ...auth, ...MERGE_PATCH_BODY }, body: '{"status":"available"}' }) },
  { operation: 'updatePet', status: 412, what: 'an If-Match that no longer holds', request: ({ auth }) => ({ method: 'PATCH', path: '/pets/1', headers: { ...auth, ...MERGE_PATCH_BODY, 'if-match': '"stale"' }, body: '{"name":"Max"}' }) },
  { operation: 'updatePet', status: 413, what: 'a body over 16 KiB', request: ({ auth }) => ({ method: 'PATCH', path: '/pets/1', headers: { ...auth, ...MERGE_PATCH_BODY }, body: JSON.stringify({ name: 'x'.repeat(20_000) }) }) },
  { operation: 'updatePet', status: 415, what: 'a body that is not JSON', request: ({ auth }) => ({ method: 'PATCH', path: '/pets/1', headers: { ...auth, 'content-type': 'text/plain' }, body: 'Max' }) },
  {
    operation: 'placeOrder',
    status: 201,
    what: 'an order for an available pet, with an Idempotency-Key',
    before: async ({ api }) => { assert.equal((await api.app.petStore.createPet({ name: 'Kit', categoryId: 3, status: 'available' })).id, 3) },
    request: ({ auth }) => ({ method: 'POST', path: '/store/orders', headers: { ...auth, ...JSON_BODY, 'idempotency-key': 'order-1' }, body: ORDER_WITH_METADATA })
  },
  { operation: 'placeOrder', status: 201, what: 'a replay of it', request: ({ auth }) => ({ method: 'POST', path: '/store/orders', headers: { ...auth, ...JSON_BODY, 'idempotency-key': 'order-1' }, body: ORDER_WITH_METADATA }) },
  { operation: 'placeOrder', status: 409, what: 'a pet already ordered', request: ({ auth }) => ({ method: 'POST', path: '/store/orders', headers: { ...auth, ...JSON_BODY }, body: '{"petId":3}' }) },
  { operation: 'placeOrder', status: 422, what: 'a pet that does not exist', request: ({ auth }) => ({ method: 'POST', path: '/store/orders', headers: { ...auth, ...JSON_BODY }, body: '{"petId":999}' }) },
  { operation: 'placeOrder', status: 422, what: 'an Idempotency-Key reused with another body', request: ({ auth }) => ({ method: 'POST', path: '/store/orders', headers: { ...auth, ...JSON_BODY, 'idempotency-key': 'order-1' }, body: '{"petId":2}' }) },
  { operation: 'placeOrder', status: 400, what: 'a metadata key too long', request: ({ auth }) => ({ method: 'POST', path: '/store/orders', headers: { ...auth, ...JSON_BODY }, body: JSON.stringify({ petId: 3, metadata: { ['k'.repeat(41)]: 'v' } }) }) },
  { operation: 'placeOrder', status: 400, what: 'an unknown field', request: ({ auth }) => ({ method: 'POST', path: '/store/orders', headers: { ...auth, ...JSON_BODY }, body: '{"petId":3,"quantity":2}' }) },
  { operation: 'placeOrder', status: 403, what: 'a read key', request: ({ readKey }) => ({ method: 'POST', path: '/store/orders', headers: { ...readKey, ...JSON_BODY }, body: '{"petId":3}' }) },
  { operation: 'placeOrder', status: 413, what: 'a body over 16 KiB', request: ({ auth }) => ({ method: 'POST', path: '/store/orders', headers: { ...auth, ...JSON_BODY }, body: JSON.stringify({ petId: 3, pad: 'x'.repeat(20_000) }) }) },
  { operation: 'placeOrder', status: 415, what: 'a body that is not JSON', request: ({ auth }) => ({ method: 'POST', path: '/store/orders', headers: { ...auth, 'content-type': 'text/plain' }, body: '3' }) },
  { operation: 'listOrders', status: 200, what: 'the orders of a pet', request: ({ auth }) => ({ method: 'GET', path: '/store/orders?petId=3&status=placed', headers: auth }) },
  { operation: 'listOrders', status: 400, what: 'a limit out of range', request: ({ auth }) => ({ method: 'GET', path: '/store/orders?limit=0', headers: auth }) },
  { operation: 'listOrders', status: 400, what: 'a cursor the service did not issue', request: ({ auth }) => ({ method: 'GET', path: '/store/orders?cursor=abc', headers: auth }) },
  { operation: 'getOrder', status: 200, what: 'an order, with its ETag', request: ({ auth }) => ({ method: 'GET', path: '/store/orders/1', headers: auth }) },
  { operation: 'getOrder', status: 304, what: 'an order that still matches If-None-Match', request: ({ auth }) => ({ method: 'GET', path: '/store/orders/1', headers: { ...auth, 'if-none-match': '*' } }) },
  { operation: 'getOrder', status: 400, what: 'an id that is not an integer', request: ({ auth }) => ({ method: 'GET', path: '/store/orders/abc', headers: auth }) },
  { operation: 'getOrder', status: 404, what: 'an id no order has', request: ({ auth }) => ({ method: 'GET', path: '/store/orders/999', headers: auth }) },
  { operation: 'updateOrder', status: 403, what: 'a read key', request: ({ readKey }) => ({ method: 'PATCH', path: '/store/orders/1', headers: { ...readKey, ...MERGE_PATCH_BODY }, body: '{"status":"approved"}' }) },
  { operation: 'updateOrder', status: 200, what: 'an order approved', request: ({ auth }) => ({ method: 'PATCH', path: '/store/orders/1', headers: { ...auth, ...MERGE_PATCH_BODY }, body: '{"status":"approved"}' }) },
  { operation: 'updateOrder', status: 200, what: 'metadata merged: one key set, one removed', request: ({ auth }) => ({ method: 'PATCH', path: '/store/orders/1', headers: { ...auth, ...MERGE_PATCH_BODY }, body: '{"metadata":{"channel":"phone","coupon":null}}' }) },
  { operation: 'updateOrder', status: 400, what: 'a cancellationReason without the move to cancelled', request: ({ auth }) => ({ method: 'PATCH', path: '/store/orders/1', headers: { ...auth, ...MERGE_PATCH_BODY }, body: '{"cancellationReason":"why"}' }) },
  { operation: 'updateOrder', status: 400, what: 'a status outside the enum', request: ({ auth }) => ({ method: 'PATCH', path: '/store/orders/1', headers: { ...auth, ...MERGE_PATCH_BODY }, body: '{"status":"shipped"}' }) },
  { operation: 'updateOrder', status: 404, what: 'an id no order has', request: ({ auth }) => ({ method: 'PATCH', path: '/store/orders/999', headers: { ...auth, ...MERGE_PATCH_BODY }, body: '{"status":"approved"}' }) },
  { operation: 'updateOrder', status: 409, what: 'an approved order placed again', request: ({ auth }) => ({ method: 'PATCH', path: '/store/orders/1', headers: { ...auth, ...MERGE_PATCH_BODY }, body: '{"status":"placed"}' }) },
  { operation: 'updateOrder', status: 412, what: 'an If-Match that no longer holds', request: ({ auth }) => ({ method: 'PATCH', path: '/store/orders/1', headers: { ...auth, ...MERGE_PATCH_BODY, 'if-match': '"stale"' }, body: '{"status":"delivered"}' }) },
  { operation: 'updateOrder', status: 413, what: 'a body over 16 KiB', request: ({ auth }) => ({ method: 'PATCH', path: '/store/orders/1', headers: { ...auth, ...MERGE_PATCH_BODY }, body: JSON.stringify({ status: 'x'.repeat(20_000) }) }) },
  { operation: 'updateOrder', status: 415, what: 'a body that is not JSON', request: ({ auth }) => ({ method: 'PATCH', path: '/store/orders/1', headers: { ...auth, 'content-type': 'text/plain' }, body: 'approved' }) },
  { operation: 'updatePet', status: 409, what: 'the status of a pet with an open order', request: ({ auth }) => ({ method: 'PATCH', path: '/pets/3', headers: { ...auth, ...MERGE_PATCH_BODY }, body: '{"status":"sold"}' }) },
  { operation: 'updateOrder', status: 200, what: 'an order cancelled with a reason', request: ({ auth }) => ({ method: 'PATCH', path: '/store/orders/1', headers: { ...auth, ...MERGE_PATCH_BODY }, body: '{"status":"cancelled","cancellationReason":"Changed their mind."}' }) },
  { operation: 'getInventory', status: 200, what: 'the counts by status', request: ({ auth }) => ({ method: 'GET', path: '/store/inventory', headers: auth }) },
  { operation: 'getInventory', status: 400, what: 'a query parameter', request: ({ auth }) => ({ method: 'GET', path: '/store/inventory?status=sold', headers: auth }) },
  { operation: 'listEvents', status: 200, what: 'every event so far (both types)', request: ({ auth }) => ({ method: 'GET', path: '/events', headers: auth }) },
  { operation: 'listEvents', status: 200, what: 'a filtered page after an id', request: ({ auth }) => ({ method: 'GET', path: '/events?after=1&type=pet.updated&limit=1', headers: auth }) },
  { operation: 'listEvents', status: 200, what: 'an empty page past the newest event', request: ({ auth }) => ({ method: 'GET', path: '/events?after=1000', headers: auth }) },
  { operation: 'listEvents', status: 400, what: 'an unknown event type', request: ({ auth }) => ({ method: 'GET', path: '/events?type=pet.deleted', headers: auth }) },
  { operation: 'getEvent', status: 200, what: 'the first event', request: ({ auth }) => ({ method: 'GET', path: '/events/1', headers: auth }) },
  { operation: 'getEvent', status: 400, what: 'an id that is not an integer', request: ({ auth }) => ({ method: 'GET', path: '/events/abc', headers: auth }) },
  { operation: 'getEvent', status: 404, what: 'an id no event has', request: ({ auth }) => ({ method: 'GET', path: '/events/1000', headers: auth }) },
  { operation: 'putCategory', status: 201, what: 'a name for the category pets carry', request: ({ auth }) => ({ method: 'PUT', path: '/categories/1', headers: { ...auth, ...JSON_BODY }, body: '{"name":"Hawk"}' }) },
  { operation: 'putCategory', status: 200, what: 'the category renamed', request: ({ auth }) => ({ method: 'PUT', path: '/categories/1', headers: { ...auth, ...JSON_BODY }, body: '{"name":"Emu"}' }) },
  { operation: 'putCategory', status: 201, what: 'a name for a category no pet carries', request: ({ auth }) => ({ method: 'PUT', path: '/categories/-5', headers: { ...auth, ...JSON_BODY }, body: '{"name":"Yak"}' }) },
  { operation: 'putCategory', status: 400, what: 'a name too long', request: ({ auth }) => ({ method: 'PUT', path: '/categories/1', headers: { ...auth, ...JSON_BODY }, body: JSON.stringify({ name: 'x'.repeat(101) }) }) },
  { operation: 'putCategory', status: 403, what: 'a read key', request: ({ readKey }) => ({ method: 'PUT', path: '/categories/1', headers: { ...readKey, ...JSON_BODY }, body: '{"name":"Emu"}' }) },
  { operation: 'putCategory', status: 409, what: 'another category\'s name', request: ({ auth }) => ({ method: 'PUT', path: '/categories/2', headers: { ...auth, ...JSON_BODY }, body: '{"name":"Emu"}' }) },
  { operation: 'putCategory', status: 413, what: 'a body over 16 KiB', request: ({ auth }) => ({ method: 'PUT', path: '/categories/1', headers: { ...auth, ...JSON_BODY }, body: JSON.stringify({ name: 'x'.repeat(20_000) }) }) },
  { operation: 'putCategory', status: 415, what: 'a body that is not JSON', request: ({ auth }) => ({ method: 'PUT', path: '/categories/1', headers: { ...auth, 'content-type': 'text/plain' }, body: 'Emu' }) },
  { operation: 'listCategories', status: 200, what: 'a first page with a next link', request: ({ auth }) => ({ method: 'GET', path: '/categories?limit=1', headers: auth }) },
  { operation: 'listCategories', status: 400, what: 'a cursor the service did not issue', request: ({ auth }) => ({ method: 'GET', path: '/categories?cursor=abc', headers: auth }) },
  { operation: 'getCategory', status: 200, what: 'a category, with its ETag', request: ({ auth }) => ({ method: 'GET', path: '/categories/1', headers: auth }) },
  { operation: 'getCategory', status: 200, what: 'a category pets carry, no name given', request: ({ auth }) => ({ method: 'GET', path: '/categories/2', headers: auth }) },
  { operation: 'getCategory', status: 304, what: 'a category that still matches If-None-Match', request: ({ auth }) => ({ method: 'GET', path: '/categories/1', headers: { ...auth, 'if-none-match': '*' } }) },
  { operation: 'getCategory', status: 400, what: 'an id that is not an integer', request: ({ auth }) => ({ method: 'GET', path: '/categories/abc', headers: auth }) },
  { operation: 'getCategory', status: 404, what: 'an id with no name and no pet', request: ({ auth }) => ({ method: 'GET', path: '/categories/999', headers: auth }) },
  ...WEBHOOK_TRAFFIC,
  {
    operation: 'listEvents',
    status: 410,
    what: 'events after the id were deleted by retention',
    before: async ({ api, clock }) => {
      clock.advance((api.config.eventRetentionDays + 1) * 86_400_000)
      await api.app.eventRetention.purge()
    },
    request: ({ auth }) => ({ method: 'GET', path: '/events?after=1', headers: auth })
  },
  { operation: 'getEvent', status: 410, what: 'an event retention deleted', request: ({ auth }) => ({ method: 'GET', path: '/events/1', headers: auth }) },
  { operation: 'getHealth', status: 200, what: 'the liveness probe', request: () => ({ method: 'GET', path: '/healthz' }) },
  { operation: 'getReadiness', status: 200, what: 'the readiness probe', request: () => ({ method: 'GET', path: '/readyz' }) },
  { operation: 'getOpenApiJson', status: 200, what: 'the document as JSON', request: () => ({ method: 'GET', path: '/openapi.json' }) },
  { operation: 'getOpenApiYaml', status: 200, what: 'the document as YAML', request: () => ({ method: 'GET', path: '/openapi.yaml' }) },
  { operation: 'getAsyncApiJson', status: 200, what: 'the events\' AsyncAPI document as JSON', request: () => ({ method: 'GET', path: '/asyncapi.json' }) },
  { operation: 'getAsyncApiYaml', status: 200, what: 'the events\' AsyncAPI document as YAML', request: () => ({ method: 'GET', path: '/asyncapi.yaml' }) },
  // a key that is sent but unknown: without any key, Prism answers 401 itself instead of forwarding
  ...forEveryOperation(401, 'an unknown key', ({ unknownKey }) => unknownKey),
  ...forEveryOperation(429, 'an unknown key from an address over the failed-auth limit', ({ unknownKey }) => unknownKey, async ({ api, unknownKey }) => {
    // Prism forwards from 127.0.0.1, the address inject uses
    let res: LightMyRequestResponse
    do res = await api.app.inject({ method: 'GET', url: '/v1/pets', headers: unknownKey })
    while (res.statusCode === 401)
    assert.equal(res.statusCode, 429)
  }),
  ...forEveryOperation(503, 'the store is down', ({ auth, adminKey }, admin) => admin ? adminKey : auth, async ({ api }) => { await api.app.database.close() }),
  { operation: 'getReadiness', status: 503, what: 'the readiness probe while the store is down', request: () => ({ method: 'GET', path: '/readyz' }) },
  {
    operation: 'getPet',
    status: 410,
    what: 'the sunset has passed',
    before: async ({ clock }) => { clock.advance(GET_PET_SUNSET_AT.getTime() - clock.now()) },
    request: ({ auth }) => ({ method: 'GET', path: '/pets/1', headers: auth })
  }
]

/** Documented statuses no request provokes, and why. */
const NOT_PROVOKED: Record<string, string> = {
  500: 'a fault of ours: nothing provokes one on purpose (test/errors.test.ts checks its shape)',
  'getOpenApiJson 503': 'only while the instance is overloaded (test/overload/load-shedding.test.ts)',
  'getOpenApiYaml 503': 'only while the instance is overloaded (test/overload/load-shedding.test.ts)',
  'getAsyncApiJson 503': 'only while the instance is overloaded (test/overload/load-shedding.test.ts)',
  'getAsyncApiYaml 503': 'only while the instance is overloaded (test/overload/load-shedding.test.ts)'
}

// sent with every answer and described once in the document's prose, or HTTP's own framing
const UNLISTED_HEADERS = new Set(['content-type', 'content-length', 'date', 'connection', 'keep-alive', 'transfer-encoding', ...Object.keys(securityHeaders())])

/** Headers of an answer its documented response does not name. */
function undocumentedHeaders (operation: ApiOperation, status: number, headers: Record<string, unknown>): string[] {
  const documented = new Set(Object.keys(operation.responses[String(status)]?.headers ?? {}).map((name) => name.toLowerCase()))
  return Object.keys(headers).map((name) => name.toLowerCase()).filter((name) => !UNLISTED_HEADERS.has(name) && !documented.has(name))
}

/** What the document promises about an answer, checked here (the fuzzer's check); a 5xx the case provokes on purpose is no fault. */
function conformanceProblems (fuzzer: ApiFuzzer, operation: ApiOperation, res: LightMyRequestResponse, expected: number): string[] {
  return fuzzer.checkConformance(operation, res, '').filter((problem) => !(res.statusCode === expected && problem === `answered ${expected}: a server error`))
}

/** The app on a port of its own, its document, and a Prism proxy in front of each of its servers (`/v1` and the root). */
async function proxiedService (t: TestContext, store: StoreKind) {
  const key = generateApiKey()
  const readKey = generateApiKey()
  const adminKey = generateApiKey()
  const clock = manualClock()
  // every operation is asked once with an unknown key (401) before the address is over the failed-auth limit: room for them all
  const port = await freePort()
  const origin = `http://127.0.0.1:${port}`
  const api = await buildTestApp(t, { store, clock, withKey: false, env: { PETSTORE_API_KEYS: key, PETSTORE_READ_API_KEYS: readKey, PETSTORE_ADMIN_API_KEYS: adminKey, PUBLIC_BASE_URL: `${origin}/v1`, WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true', AUTH_FAILURE_LIMIT: '40' } })
  await api.app.listen({ port, host: '127.0.0.1' })
  const fuzzer = await ApiFuzzer.create(api.app, key, { seedPets: 0 })
  const basePaths = [...new Set(fuzzer.api.operations.map((operation) => operation.basePath))]
  const proxies = new Map<string, PrismProxy>(await Promise.all(basePaths.map(async (basePath) =>
    [basePath, await startPrismProxy(t, `${origin}/v1/openapi.json`, `${origin}${basePath}`)] as const)))
  const context: TrafficContext = { api, clock, auth: { authorization: `Bearer ${key}` }, unknownKey: { authorization: `Bearer ${generateApiKey()}` }, readKey: { authorization: `Bearer ${readKey}` }, adminKey: { authorization: `Bearer ${adminKey}` } }
  return { context, fuzzer, proxies }
}

for (const store of testStores()) {
  describe(`the service behind Prism's validation proxy (${store})`, () => {
    test('When every operation is called for every status a request can provoke, through Prism with --errors, then Prism reports no violation, and every header sent is documented', async (t) => {
      const { context, fuzzer, proxies } = await proxiedService(t, store)
      const provoked = new Set<string>()
      const problems: string[] = []

      for (const trafficCase of TRAFFIC) {
        await trafficCase.before?.(context)
        const operation = fuzzer.api.operation(trafficCase.operation)
        const exchange = trafficCase.request(context)
        const label = `${operation.id} ${trafficCase.status} (${trafficCase.what}): ${exchange.method} ${exchange.path}`
        let status: number
        let headers: Record<string, unknown>
        if (trafficCase.direct === undefined) {
          const proxy = proxies.get(operation.basePath)
          assert.ok(proxy !== undefined)
          const res = await fetch(`${proxy.url}${exchange.path}`, { method: exchange.method, headers: exchange.headers, body: exchange.body })
          const body = await res.text()
          status = res.status
          headers = Object.fromEntries(res.headers)
          if (res.headers.get('sl-violations') !== null) problems.push(`${label}: Prism reports ${res.headers.get('sl-violations') ?? ''}`)
          if (status !== trafficCase.status) problems.push(`${label}: answered ${status} through Prism: ${body.slice(0, 500)}`)
        } else {
          const res = await context.api.app.inject({ method: exchange.method as 'GET', url: `${operation.basePath}${exchange.path}`, headers: exchange.headers, ...(exchange.body === undefined ? {} : { payload: exchange.body }) })
          status = res.statusCode
          headers = res.headers
          problems.push(...conformanceProblems(fuzzer, operation, res, trafficCase.status).map((problem) => `${label}: ${problem}`))
          if (status !== trafficCase.status) problems.push(`${label}: answered ${status}: ${res.body.slice(0, 500)}`)
        }
        provoked.add(`${operation.id} ${status}`)
        problems.push(...undocumentedHeaders(operation, status, headers).map((name) => `${label}: header ${name} is not documented on ${status}`))

        // HEAD is documented wherever GET is, but Prism cannot relay it (it parses the empty body as JSON):
        // the same request as HEAD, straight to the service, is checked against the HEAD operation here
        const head = exchange.method === 'GET' ? fuzzer.api.operations.find((candidate) => candidate.id === `${operation.id}-head`) : undefined
        if (head === undefined) continue
        const res = await context.api.app.inject({ method: 'HEAD', url: `${operation.basePath}${exchange.path}`, headers: exchange.headers })
        provoked.add(`${head.id} ${res.statusCode}`)
        if (res.statusCode !== status) problems.push(`HEAD of ${label}: answered ${res.statusCode}, GET ${status}`)
        problems.push(...conformanceProblems(fuzzer, head, res, trafficCase.status).map((problem) => `HEAD of ${label}: ${problem}`))
        problems.push(...undocumentedHeaders(head, res.statusCode, res.headers).map((name) => `HEAD of ${label}: header ${name} is not documented on ${res.statusCode}`))
      }

      assert.deepEqual(problems, [])
      // every documented status of every operation was provoked, or no request can provoke it
      const missing = fuzzer.api.operations.flatMap((operation) => Object.keys(operation.responses)
        .filter((status) => !provoked.has(`${operation.id} ${status}`))
        .filter((status) => NOT_PROVOKED[status] === undefined && NOT_PROVOKED[`${operation.id.replace(/-head$/, '')} ${status}`] === undefined)
        .map((status) => `${operation.id} ${status}`))
      assert.deepEqual(missing, [], 'documented statuses the traffic never provoked: add a case to TRAFFIC')
      t.diagnostic(`${TRAFFIC.length} cases, ${provoked.size} operation/status pairs provoked`)
    })
  })
}

describe('the Prism validation proxy itself', () => {
  test('When an answer breaks the document it validates against, then Prism reports the violation (so a clean run means something)', async (t) => {
    const { context, fuzzer } = await proxiedService(t, 'sqlite')
    const document = structuredClone(fuzzer.api.document) as unknown as { components: { schemas: { Pet: { properties: { name: Record<string, unknown> } } } } }
    // a document that says a pet's name has one character at most
    document.components.schemas.Pet.properties.name.maxLength = 1
    const file = join(await tempDir(t), 'tampered.json')
    await writeFile(file, stringifyJson(document))
    const origin = `http://127.0.0.1:${(context.api.app.server.address() as { port: number }).port}`
    const proxy = await startPrismProxy(t, file, `${origin}/v1`)
    await context.api.app.inject({ method: 'POST', url: '/v1/pets', headers: { ...context.auth, ...JSON_BODY }, payload: REX })

    const res = await fetch(`${proxy.url}/pets/1`, { headers: context.auth })

    assert.equal(res.status, 500, 'Prism relayed a pet whose name breaks the document without complaint')
    assert.match(await res.text(), /VIOLATIONS[\s\S]*name/)
    assert.match(res.headers.get('sl-violations') ?? '', /maxLength|characters/)
  })
})

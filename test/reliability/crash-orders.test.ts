import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import type { Pet } from '../../src/capabilities/pets/pet-schemas.js'
import { summarize } from '../helpers/crash-load.js'
import { freshDatabaseUrl, testStores } from '../helpers/databases.js'
import { bearer, describeFetchError, listAllPetsOver, loadEnv, mapConcurrently, sleep, strongApiKey } from '../helpers/live-server.js'
import { serverProcesses, within, type ServerProcess } from '../helpers/processes.js'

// SIGKILL during a storm of orders: an order, its pet's status and their events change in one
// transaction, so after a restart every acknowledged order is there and no pet is left pending
// without its open order (or sold without its delivered one).

interface Order { id: number, petId: number, status: OrderStatus, placedAt: string }
type OrderStatus = 'placed' | 'approved' | 'delivered' | 'cancelled'

const PETS = 150
/** Client loops, each with one request in flight at a time. */
const LOOPS = 12
const KILLS = 2
/** The kill comes once this many placements were answered 201 (in this storm), and while other requests are in flight. */
const PLACED_BEFORE_KILL = 60
/** The loops must get there within this long; a machine that cannot is reported, not waited on. */
const MAX_LOAD_MS = 30_000
const OPEN: ReadonlySet<OrderStatus> = new Set(['placed', 'approved'])
/** What a loop does to an order it placed: approve it, then deliver or cancel it (or leave it open). */
const NEXT: Readonly<Record<OrderStatus, readonly OrderStatus[]>> = { placed: ['approved', 'cancelled'], approved: ['delivered', 'cancelled'], delivered: [], cancelled: [] }

/** What the clients learnt, over every kill: the last status each order was acknowledged in, and requests the kills cut off. */
interface Known {
  acknowledged: Map<number, Order>
  /** Orders whose status change was sent and not answered: the order may be in that status. */
  cutOffChanges: Map<number, OrderStatus>
  /** Pets a placeOrder was sent for and not answered: an order may exist for them that nobody saw. */
  cutOffPlacements: Set<number>
}

async function send (server: ServerProcess, apiKey: string, method: string, path: string, body?: unknown): Promise<{ status: number, json: unknown }> {
  const res = await fetch(`${server.baseUrl}${path}`, {
    method,
    headers: { ...bearer(apiKey), ...(body === undefined ? {} : { 'content-type': method === 'PATCH' ? 'application/merge-patch+json' : 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(10_000)
  })
  const text = await res.text()
  return { status: res.status, json: text === '' ? undefined : JSON.parse(text) }
}

/** One request a loop sent: a placement for a pet, or a status change of an order. */
interface Sent {
  label: string
  petId: number
  /** For a status change: the order and the status asked for. */
  change?: { orderId: number, status: OrderStatus }
  answered?: boolean
  error?: string
}

interface StormOutcome {
  /** placeOrder answered 201 when SIGKILL was sent. */
  placedAtKill: number
  /** Sent and not yet answered when SIGKILL was sent. */
  inFlightAtKill: number
  /** Of those, answered just before the kill. */
  answeredJustBefore: number
  /** Of those, cut off by the kill: the connection failed. */
  cutOff: string[]
}

/**
 * Client loops placing orders on random pets and moving them along until the process is SIGKILLed: the kill
 * comes once {@link PLACED_BEFORE_KILL} placements were answered 201 and while other requests are in flight.
 * A loop sends nothing after the kill. Any answer but 201 or 409 to a placement, or 200 to a change, and any
 * failed request that was not in flight at the kill, fails the test: only the kill may cut a request off.
 */
async function stormThenKill (server: ServerProcess, apiKey: string, petIds: readonly number[], known: Known): Promise<StormOutcome> {
  let placed = 0
  const inFlight = new Set<Sent>()
  const failed: Sent[] = []
  const unexpected: string[] = []
  // set at the kill: the requests in flight then
  const kill: { inFlight?: ReadonlySet<Sent> } = {}
  /** Sends one request, keeping it in flight until it is answered or fails; undefined when it failed. */
  const request = async (sent: Sent, method: string, path: string, body: unknown): Promise<{ status: number, json: unknown } | undefined> => {
    inFlight.add(sent)
    try {
      const answer = await send(server, apiKey, method, path, body)
      sent.answered = true
      return answer
    } catch (error) {
      sent.error = describeFetchError(error)
      failed.push(sent)
      if (sent.error === 'TimeoutError') unexpected.push(`${sent.label} timed out`)
      return undefined
    } finally {
      inFlight.delete(sent)
    }
  }
  const loop = async (loopIndex: number): Promise<void> => {
    for (let n = 0; kill.inFlight === undefined; n++) {
      const petId = petIds[Math.floor(Math.random() * petIds.length)] as number
      const placing: Sent = { label: `loop ${loopIndex} placeOrder ${n} (pet ${petId})`, petId }
      const placement = await request(placing, 'POST', '/v1/store/orders', { petId })
      if (placement === undefined) return
      if (placement.status === 409) continue
      if (placement.status !== 201) { unexpected.push(`${placing.label}: ${placement.status} ${JSON.stringify(placement.json)}`); return }
      let order = placement.json as Order
      known.acknowledged.set(order.id, order)
      placed++
      while (kill.inFlight === undefined) {
        const choices = NEXT[order.status]
        // leave some orders open, so that a kill finds pets pending
        if (choices.length === 0 || Math.random() < 0.25) break
        const status = choices[Math.floor(Math.random() * choices.length)] as OrderStatus
        const changing: Sent = { label: `loop ${loopIndex} updateOrder ${order.id} → ${status}`, petId, change: { orderId: order.id, status } }
        const change = await request(changing, 'PATCH', `/v1/store/orders/${order.id}`, { status })
        if (change === undefined) return
        if (change.status !== 200) { unexpected.push(`${changing.label}: ${change.status} ${JSON.stringify(change.json)}`); return }
        order = change.json as Order
        known.acknowledged.set(order.id, order)
      }
    }
  }
  const loops = Array.from({ length: LOOPS }, async (_, i) => { await loop(i) })
  const started = Date.now()
  // the kill waits for enough placements with a request in flight; a failure or another answer ends the wait at once
  for (;;) {
    if (placed >= PLACED_BEFORE_KILL && inFlight.size > 0) break
    if (failed.length > 0 || unexpected.length > 0 || Date.now() - started > MAX_LOAD_MS) break
    await sleep(5)
  }
  // nothing awaits between the last check and the kill: what is in flight now is what the kill cuts off
  const killedWhile = new Set(inFlight)
  kill.inFlight = killedWhile
  const placedAtKill = placed
  server.child.kill('SIGKILL')
  assert.deepEqual(failed.map((sent) => `${sent.label}: ${sent.error ?? ''}`), [], 'a request failed before the process was killed')
  assert.deepEqual(unexpected, [], 'every answer before the kill is 201 or 409 to a placement, 200 to a change')
  assert.ok(placedAtKill >= PLACED_BEFORE_KILL, `only ${placedAtKill} orders were placed in ${MAX_LOAD_MS} ms before the kill`)
  assert.ok(killedWhile.size > 0, 'no request was in flight at the kill')
  assert.deepEqual(await server.waitForExit(5_000), { code: null, signal: 'SIGKILL' })
  await within(15_000, 'client loops did not stop after the kill', Promise.all(loops))

  assert.deepEqual(unexpected, [], 'every answer is 201 or 409 to a placement, 200 to a change')
  for (const sent of failed) assert.ok(killedWhile.has(sent), `${sent.label} failed (${sent.error ?? ''}) without being in flight at the kill`)
  // each request in flight at the kill was either answered just before it or cut off by it
  for (const sent of killedWhile) assert.ok(sent.answered !== (sent.error !== undefined), `${sent.label}, in flight at the kill, ended neither answered nor failed`)
  for (const sent of failed) {
    if (sent.change === undefined) known.cutOffPlacements.add(sent.petId)
    else known.cutOffChanges.set(sent.change.orderId, sent.change.status)
  }
  return { placedAtKill, inFlightAtKill: killedWhile.size, answeredJustBefore: killedWhile.size - failed.length, cutOff: failed.map((sent) => sent.error ?? '') }
}

async function listAllOrders (server: ServerProcess, apiKey: string): Promise<Order[]> {
  const orders: Order[] = []
  let url: string | undefined = `${server.baseUrl}/v1/store/orders?limit=100`
  for (let page = 1; url !== undefined; page++) {
    assert.ok(page <= 1_000, 'the next links never end')
    const res: Response = await fetch(url, { headers: bearer(apiKey), signal: AbortSignal.timeout(10_000) })
    const text = await res.text()
    assert.equal(res.status, 200, `page ${page} (${url}): ${text}`)
    orders.push(...(JSON.parse(text) as Order[]))
    url = /<([^>]+)>;\s*rel="next"/.exec(res.headers.get('link') ?? '')?.[1]
  }
  return orders
}

/** The checks after a restart: acknowledged orders kept, one open order per pet, pets' statuses those of their orders, the inventory exact. */
async function checkAfterRestart (server: ServerProcess, apiKey: string, petIds: readonly number[], known: Known): Promise<{ orders: number, pending: number }> {
  const orders = await listAllOrders(server, apiKey)
  const byId = new Map(orders.map((order) => [order.id, order]))
  for (const [id, answered] of known.acknowledged) {
    const stored = byId.get(id)
    assert.ok(stored !== undefined, `order ${id} (pet ${answered.petId}) was acknowledged, and is missing after the restart`)
    const cutOff = known.cutOffChanges.get(id)
    if (stored.status === answered.status) assert.deepEqual(stored, answered, `order ${id} differs from its last answer`)
    else assert.equal(stored.status, cutOff, `order ${id} is ${stored.status}, though its last answer said ${answered.status} and no change to ${stored.status} was cut off`)
  }
  for (const order of orders) {
    if (!known.acknowledged.has(order.id)) assert.ok(known.cutOffPlacements.has(order.petId), `order ${JSON.stringify(order)} was never acknowledged, nor was a placeOrder for its pet cut off`)
  }
  const pets = new Map((await listAllPetsOver(server.baseUrl, apiKey)).map((pet): [number, Pet] => [pet.id, pet]))
  let pending = 0
  for (const petId of petIds) {
    const pet = pets.get(petId)
    assert.ok(pet !== undefined, `pet ${petId} is missing`)
    const ofPet = orders.filter((order) => order.petId === petId)
    const open = ofPet.filter((order) => OPEN.has(order.status))
    assert.ok(open.length <= 1, `pet ${petId} has ${open.length} open orders: ${JSON.stringify(open)}`)
    const delivered = ofPet.some((order) => order.status === 'delivered')
    const expected = open.length === 1 ? 'pending' : delivered ? 'sold' : 'available'
    assert.equal(pet.status, expected, `pet ${petId} is ${pet.status}, its orders ${JSON.stringify(ofPet)}`)
    if (pet.status === 'pending') pending++
  }
  const inventory = await send(server, apiKey, 'GET', '/v1/store/inventory')
  assert.equal(inventory.status, 200)
  const counted = { available: 0, pending: 0, sold: 0 }
  for (const pet of pets.values()) counted[pet.status]++
  assert.deepEqual(inventory.json, counted, 'the inventory counts the pets as listed')
  return { orders: orders.length, pending }
}

// a load on the machine: one store at a time
for (const store of testStores()) {
  describe(`orders under SIGKILL (${store})`, () => {
    test(`When the process is SIGKILLed twice during a storm of orders, each time with ${PLACED_BEFORE_KILL} orders placed and other requests in flight, then after each restart every acknowledged order is there as answered, no pet has two open orders, each pet has the status its orders give it and the inventory is exact`, async (t) => {
      // before freshDatabaseUrl: the processes die before their SQLite directory is removed
      const servers = serverProcesses(t)
      const databaseUrl = await freshDatabaseUrl(t, store)
      const apiKey = strongApiKey()
      const env = loadEnv(databaseUrl, apiKey)
      let server = await servers.start(env)
      const petIds = await mapConcurrently(Array.from({ length: PETS }, (_, i) => i), 8, async (i) => {
        const created = await send(server, apiKey, 'POST', '/v1/pets', { name: `storm-${i}`, categoryId: i, status: 'available' })
        assert.equal(created.status, 201, JSON.stringify(created.json))
        return (created.json as Pet).id
      })
      const known: Known = { acknowledged: new Map(), cutOffChanges: new Map(), cutOffPlacements: new Set() }
      for (let kill = 1; kill <= KILLS; kill++) {
        const storm = await stormThenKill(server, apiKey, petIds, known)
        server = await servers.start(env)
        const after = await checkAfterRestart(server, apiKey, petIds, known)
        t.diagnostic(`${store} kill ${kill}: SIGKILL with ${storm.placedAtKill} orders placed and ${storm.inFlightAtKill} requests in flight ` +
          `(${storm.answeredJustBefore} of them answered just before it, ${storm.cutOff.length} cut off: ${summarize(storm.cutOff)}); ` +
          `after the restart ${after.orders} orders stored, ${known.acknowledged.size} acknowledged so far all verified, ${after.pending} pets pending`)
      }
    })
  })
}

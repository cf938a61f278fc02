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
const LOOPS = 12
const KILLS = 2
const MIN_LOAD_MS = 400
const MAX_LOAD_MS = 3_000
const TARGET_ORDERS = 60
/** Fewer acknowledged orders than this before a kill would make the check meaningless. */
const MIN_ORDERS_PER_KILL = 10
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

/** Loops placing orders on random pets and moving them along until SIGKILL; returns how many were acknowledged and cut off. */
async function stormThenKill (server: ServerProcess, apiKey: string, petIds: readonly number[], known: Known): Promise<{ placed: number, inFlightAtKill: number, errors: string[] }> {
  let placed = 0
  let inFlight = 0
  const errors: string[] = []
  const unexpected: string[] = []
  // an object, read by the loops after each await: the kill ends them
  const state = { stopped: false }
  const loop = async (): Promise<void> => {
    while (!state.stopped) {
      const petId = petIds[Math.floor(Math.random() * petIds.length)] as number
      let order: Order | undefined
      inFlight++
      try {
        const placing = await send(server, apiKey, 'POST', '/v1/store/orders', { petId })
        if (placing.status === 201) {
          order = placing.json as Order
          known.acknowledged.set(order.id, order)
          placed++
        } else if (placing.status !== 409) unexpected.push(`placeOrder ${petId}: ${placing.status} ${JSON.stringify(placing.json)}`)
      } catch (error) {
        known.cutOffPlacements.add(petId)
        errors.push(describeFetchError(error))
        return
      } finally {
        inFlight--
      }
      while (order !== undefined && !state.stopped) {
        const choices = NEXT[order.status]
        // leave some orders open, so that a kill finds pets pending
        if (choices.length === 0 || Math.random() < 0.25) break
        const status = choices[Math.floor(Math.random() * choices.length)] as OrderStatus
        inFlight++
        try {
          const changing = await send(server, apiKey, 'PATCH', `/v1/store/orders/${order.id}`, { status })
          if (changing.status !== 200) { unexpected.push(`updateOrder ${order.id} → ${status}: ${changing.status} ${JSON.stringify(changing.json)}`); break }
          order = changing.json as Order
          known.acknowledged.set(order.id, order)
        } catch (error) {
          known.cutOffChanges.set(order.id, status)
          errors.push(describeFetchError(error))
          return
        } finally {
          inFlight--
        }
      }
    }
  }
  const started = Date.now()
  const loops = Array.from({ length: LOOPS }, loop)
  for (;;) {
    const elapsed = Date.now() - started
    if ((elapsed >= MIN_LOAD_MS && placed >= TARGET_ORDERS) || elapsed >= MAX_LOAD_MS || errors.length > 0) break
    await sleep(5)
  }
  assert.deepEqual(errors, [], 'requests failed before the process was killed')
  const inFlightAtKill = inFlight
  server.child.kill('SIGKILL')
  assert.deepEqual(await server.waitForExit(5_000), { code: null, signal: 'SIGKILL' })
  state.stopped = true
  await within(15_000, 'client loops did not stop after the kill', Promise.all(loops))
  assert.deepEqual(unexpected, [], 'every answer before the kill is 201, 200 or 409')
  assert.ok(placed >= MIN_ORDERS_PER_KILL, `only ${placed} orders were acknowledged before the kill`)
  return { placed, inFlightAtKill, errors }
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
    test('When the process is SIGKILLed twice during a storm of orders, then after each restart every acknowledged order is there as answered, no pet has two open orders, each pet has the status its orders give it and the inventory is exact', async (t) => {
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
        t.diagnostic(`${store} kill ${kill}: ${storm.placed} orders acknowledged, ${storm.inFlightAtKill} requests in flight at SIGKILL ` +
          `(${summarize(storm.errors)}); after the restart ${after.orders} orders stored, ${known.acknowledged.size} acknowledged so far all verified, ${after.pending} pets pending`)
      }
    })
  })
}

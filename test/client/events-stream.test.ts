import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { performance } from 'node:perf_hooks'
import { setTimeout as delay } from 'node:timers/promises'
import type { FastifyInstance } from 'fastify'
import { testStores } from '../helpers/build-app.js'
import { clientOf, startFollowing, startService } from '../helpers/client-service.js'
import { startTcpProxy } from '../helpers/tcp-proxy.js'

/** A feed request as it arrived: streams are hijacked, so they are seen here rather than in `served`. */
interface FeedArrival {
  url: string
  accept: string | undefined
  lastEventId: string | undefined
}

/** Records every request for the feed as it arrives. */
function recordFeedArrivals (arrivals: FeedArrival[]): (app: FastifyInstance) => void {
  return (app) => {
    app.addHook('onRequest', async (request) => {
      if (!request.url.startsWith('/v1/events')) return
      const header = (name: string): string | undefined => request.headers[name] as string | undefined
      arrivals.push({ url: request.url, accept: header('accept'), lastEventId: header('last-event-id') })
    })
  }
}

async function waitFor (what: string, condition: () => boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = performance.now() + timeoutMs
  while (!condition()) {
    if (performance.now() > deadline) assert.fail(`timed out waiting for ${what}`)
    await delay(2)
  }
}

const isStream = (arrival: FeedArrival): boolean => arrival.accept === 'text/event-stream'

for (const store of testStores()) {
  describe(`@petstore/client events.follow over the stream (${store})`, () => {
    test('When events.follow runs, then one stream carries the events from before and after it started, in order, each once, and no page is polled', async (t) => {
      const arrivals: FeedArrival[] = []
      const service = await startService(t, { store }, recordFeedArrivals(arrivals))
      const client = clientOf(service)
      const rex = await client.createPet({ name: 'Rex', categoryId: 1 })
      await client.createPet({ name: 'Bella', categoryId: 1 })

      const following = startFollowing(t, client)
      await waitFor('the two earlier events', () => following.seen.length === 2)
      await client.updatePet(rex.id, { status: 'sold' })
      const order = await client.placeOrder({ petId: (await client.createPet({ name: 'Coco', categoryId: 1 })).id })
      const feed = await client.listEvents({ limit: 100 })
      await waitFor('the later events', () => following.seen.length >= feed.events.length)
      following.controller.abort()
      await following.done

      assert.deepEqual(following.seen, feed.events)
      // placing the order moved Coco to pending: one pet.updated beside the order's own event
      assert.deepEqual(following.seen.map((event) => event.type).sort(), ['order.created', 'pet.created', 'pet.created', 'pet.created', 'pet.updated', 'pet.updated'])
      const placed = following.seen.find((event) => event.type === 'order.created')
      assert.equal(placed?.type === 'order.created' ? placed.data.order.id : undefined, order.id)
      assert.equal(arrivals.filter((arrival) => !isStream(arrival)).length, 1, 'no page but the test\'s own listEvents')
      assert.equal(arrivals.filter(isStream).length, 1, 'one stream')
    })

    test('When the connection drops mid-stream, then events.follow connects again with Last-Event-ID and misses nothing, each event once', async (t) => {
      const arrivals: FeedArrival[] = []
      const service = await startService(t, { store }, recordFeedArrivals(arrivals))
      const proxy = await startTcpProxy(t, { host: '127.0.0.1', port: service.port })
      const direct = clientOf(service)
      const client = clientOf(service, { baseUrl: `http://127.0.0.1:${proxy.port}/v1`, retryBaseDelayMs: 10 })
      await direct.createPet({ name: 'Rex', categoryId: 1 })
      await direct.createPet({ name: 'Bella', categoryId: 1 })

      const following = startFollowing(t, client, { type: 'pet.created' })
      await waitFor('the two earlier events', () => following.seen.length === 2)
      proxy.cut('refuse')
      await direct.createPet({ name: 'Coco', categoryId: 1 })
      await direct.createPet({ name: 'Dina', categoryId: 1 })
      proxy.heal()
      await waitFor('the two events recorded while the connection was down', () => following.seen.length === 4)
      following.controller.abort()
      await following.done

      const feed = await direct.listEvents({ limit: 100 })
      assert.deepEqual(following.seen, feed.events)
      const streams = arrivals.filter(isStream)
      assert.ok(streams.length >= 2, `${streams.length} stream requests`)
      assert.equal(streams[0]?.lastEventId, undefined)
      // every reconnection asks from the last event yielded; the one that got through, from Bella's
      assert.equal(streams.at(-1)?.lastEventId, String(following.seen[1]?.id))
      assert.ok(streams.every((stream) => stream.url.includes('type=pet.created')), 'the filter is kept on every connection')
    })

    test('When events.follow is told stream: false, then it polls pages only', async (t) => {
      const arrivals: FeedArrival[] = []
      const service = await startService(t, { store }, recordFeedArrivals(arrivals))
      const client = clientOf(service)
      await client.createPet({ name: 'Rex', categoryId: 1 })

      const following = startFollowing(t, client, { stream: false, pollIntervalMs: 20 })
      await waitFor('the event', () => following.seen.length === 1)
      await waitFor('an empty poll after it', () => arrivals.length >= 2)
      following.controller.abort()
      await following.done

      assert.equal(arrivals.filter(isStream).length, 0)
      assert.ok(arrivals.every((arrival) => arrival.accept === 'application/json'))
    })
  })
}

describe('events.follow where a stream is refused', () => {
  test('When the service answers the stream with a JSON page (a service without streaming), then events.follow polls and yields every event once', async (t) => {
    const arrivals: FeedArrival[] = []
    // the stream's Accept is answered as a JSON page, as a service from before streaming answers it
    const service = await startService(t, {}, (app) => {
      recordFeedArrivals(arrivals)(app)
      app.addHook('onRequest', async (request) => { if (request.headers.accept === 'text/event-stream') request.headers.accept = 'application/json' })
    })
    const client = clientOf(service)
    await client.createPet({ name: 'Rex', categoryId: 1 })
    await client.createPet({ name: 'Bella', categoryId: 1 })

    const following = startFollowing(t, client, { pollIntervalMs: 20 })
    await waitFor('the two events', () => following.seen.length === 2)
    await client.createPet({ name: 'Coco', categoryId: 1 })
    await waitFor('the third', () => following.seen.length === 3)
    following.controller.abort()
    await following.done

    assert.deepEqual(following.seen, (await client.listEvents({ limit: 100 })).events)
    assert.equal(arrivals.filter(isStream).length, 1, 'asked for a stream once, then polled')
    assert.ok(arrivals.filter((arrival) => !isStream(arrival)).length >= 2)
  })
})

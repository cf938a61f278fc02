import assert from 'node:assert/strict'
import type { AddressInfo } from 'node:net'
import { describe, test, type TestContext } from 'node:test'
import { acceptQueueLength } from '../../src/infra/http/accept-queue.js'
import { ACCEPT_QUEUE_DRAIN_MS, OVERLOAD_SAMPLE_INTERVAL_MS } from '../../src/infra/http/load-shedding.js'
import { buildTestApp, testStores, type StoreKind } from '../helpers/build-app.js'
import { sleep } from '../helpers/live-server.js'
import { send, statusCounts } from '../helpers/overload.js'

// The app runs in this process, listening on a real socket, at the default bounds, so that the test can
// hold the app's own event loop in one long turn (as a slow request or a backup step would) while new
// clients wait in the kernel's accept queue: what the shedder's samples find there is then the test's
// doing, on any machine, and not the pace at which this machine serves.
const BURST = 200
const PATH = '/v1/pets?limit=10'
// the second burst: past the bound (64), and shorter than the first by enough to be empty within
// ACCEPT_QUEUE_DRAIN_MS at that pace (100 fewer in a sample: 100 more take half a second)
const SECOND_BURST = 100

interface ListeningApp {
  port: number
  headers: Record<string, string>
  /** Connections the app has accepted so far. */
  accepted: () => number
}

async function listeningApp (t: TestContext, store: StoreKind, env: Record<string, string> = {}): Promise<ListeningApp> {
  const { app, auth } = await buildTestApp(t, { store, env: { OVERLOAD_SHEDDING: 'true', RATE_LIMIT_MAX: '0', ...env } })
  await app.listen({ host: '127.0.0.1', port: 0, backlog: 4_096 })
  const { port } = app.server.address() as AddressInfo
  let accepted = 0
  app.server.on('connection', () => { accepted++ })
  // the documents built after the listen (start-up, not sampled), then samples of an idle loop
  assert.equal((await send(port, 'GET', '/v1/openapi.json')).status, 200)
  await sleep(3 * OVERLOAD_SAMPLE_INTERVAL_MS)
  return { port, headers: auth, accepted: () => accepted }
}

/** `count` GETs sent at once, each on a new connection; their statuses, counted. */
async function burst (app: ListeningApp, count: number): Promise<Record<number, number>> {
  return statusCounts(await Promise.all(Array.from({ length: count }, async () => send(app.port, 'GET', PATH, app.headers))))
}

/** Holds this process's event loop in one turn for `ms`, and until the `count` connections opened since `accepted` was read wait in the accept queue. */
async function oneLongTurn (app: ListeningApp, ms: number, count: number, accepted: number): Promise<void> {
  // a turn of its own, once the burst's connections are being opened
  await new Promise((resolve) => setImmediate(resolve))
  const until = performance.now() + ms
  const waiting = (): number => (acceptQueueLength(app.port) ?? 0) + app.accepted() - accepted
  while (performance.now() < until || waiting() < count) {
    assert.ok(performance.now() < until + 10_000, `only ${waiting()} of ${count} connections were opened`)
  }
}

/** Resolves once the app has accepted `count` connections since `accepted` was read. */
async function acceptedSince (app: ListeningApp, accepted: number, count: number): Promise<void> {
  while (app.accepted() - accepted < count) await new Promise((resolve) => setImmediate(resolve))
}

for (const store of testStores()) {
  describe(`load shedding: a burst in the accept queue is no overload (${store})`, () => {
    test(`When one turn of the loop takes 1.5 s while ${BURST} new clients connect (the next sample finds them all waiting: one sample past the bound), then every one is served`, async (t) => {
      const app = await listeningApp(t, store)

      const accepted = app.accepted()
      const answers = burst(app, BURST)
      await oneLongTurn(app, 1_500, BURST, accepted)

      assert.deepEqual(await answers, { 200: BURST })
      assert.deepEqual(await burst(app, BURST), { 200: BURST }, 'the burst after it')
    })

    test(`When new clients wait in the accept queue at two samples in a row, fewer at the second (${BURST} behind one long turn, ${SECOND_BURST} behind another at the next sample: empty within ${ACCEPT_QUEUE_DRAIN_MS / 1000} s at that pace), then every one is served`, async (t) => {
      // the accept queue's rule alone: two turns of a second or more in two samples in a row are a loop
      // behind by the delay's rule too (each bound is judged on its own), which this test is not about
      const app = await listeningApp(t, store, { OVERLOAD_MAX_EVENT_LOOP_DELAY_MS: '0' })

      const accepted = app.accepted()
      const first = burst(app, BURST)
      await oneLongTurn(app, 1_500, BURST, accepted)
      // the shedder takes a sample as the loop goes on (all of them waiting), and the next one a sample later
      const resumed = performance.now()
      await acceptedSince(app, accepted, BURST)
      assert.ok(performance.now() - resumed < OVERLOAD_SAMPLE_INTERVAL_MS - 100, `the first ${BURST} took ${Math.round(performance.now() - resumed)} ms to be accepted`)
      const acceptedFirst = app.accepted()
      const second = burst(app, SECOND_BURST)
      // a turn that ends after the next sample is due, so that the sample is taken with the second burst waiting
      await oneLongTurn(app, resumed + OVERLOAD_SAMPLE_INTERVAL_MS + 200 - performance.now(), SECOND_BURST, acceptedFirst)

      assert.deepEqual(await first, { 200: BURST })
      assert.deepEqual(await second, { 200: SECOND_BURST })
    })
  })
}

import assert from 'node:assert/strict'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { describe, test, type TestContext } from 'node:test'
import { buildTestApp, testStores, type TestApp } from '../helpers/build-app.js'
import { openStream, type StreamClient } from '../helpers/event-stream-client.js'
import { within } from '../helpers/processes.js'
import { bigOrder, insertCopies } from '../helpers/stream-backlog.js'
import { tempDir } from '../helpers/temp-dir.js'

// A stream whose backlog passes EVENT_STREAM_MAX_BACKLOG_KIB leaves the live streams and catches up at its
// consumer's pace; one whose consumer then takes nothing for a whole heartbeat interval is cut. Both sides:
// a consumer that reads, however slowly, is never cut and gets everything; one that reads nothing is cut.

// copies of an order with 20 metadata values of 500 characters (about 10 KiB each): past what the kernel's socket buffers hold on loopback
const COPIES = 800
// the events bigOrder records before the copies (a pet, its order, the pet's move to pending)
const FIRST_EVENTS = 3
const ENV = { EVENT_STREAM_MAX_BACKLOG_KIB: '256', EVENT_STREAM_HEARTBEAT_SECONDS: '1' }
// the slow consumer takes this much every SLOW_PAUSE_MS, nothing in between: about 1 MiB/s, a fraction of what the
// feed is written at, yet something within every heartbeat (1 s)
const SLOW_READ_BYTES = 200 * 1024
const SLOW_PAUSE_MS = 200

/** The app listening on a port of its own: streams are read over a real socket. */
async function listening (api: TestApp): Promise<string> {
  await api.app.listen({ port: 0, host: '127.0.0.1' })
  return `http://127.0.0.1:${(api.app.server.address() as { port: number }).port}`
}

/**
 * The app listening on a Unix socket (an `openStream` base): its buffer is the sender's alone (net.core.wmem_default,
 * about 200 KiB, never grown), where loopback TCP's grow to megabytes (tcp_rmem allows 32 MiB here). A consumer
 * slower than the feed then leaves the backlog on the service, past the bound, whatever the machine's settings, as a
 * slow consumer's does at the end of a long network path.
 */
async function listeningOnUnixSocket (t: TestContext, api: TestApp): Promise<string> {
  const path = join(await tempDir(t), 'petstore.sock')
  await api.app.listen({ path })
  return `unix:${path}`
}

/** Waits (polling, at most 10 s) until `predicate` holds. */
async function eventually (predicate: () => boolean, what: string): Promise<void> {
  for (const deadline = Date.now() + 10_000; !predicate(); await sleep(20)) {
    assert.ok(Date.now() < deadline, what)
  }
}

/** A metric's value as the app's registry reads it now. */
async function metricValue (api: TestApp, name: string, labels: Record<string, string> = {}): Promise<number> {
  const metric = (await api.app.metrics.registry.getMetricsAsJSON()).find((each) => each.name === name)
  const sample = (metric?.values ?? []).find((value) => Object.entries(labels).every(([label, wanted]) => String(value.labels[label]) === wanted))
  return Number(sample?.value ?? NaN)
}

/**
 * `COPIES` more events, in batches: each transaction holds SQLite's write lock briefly, as the service's own writes
 * do. `paceMs` apart, the feed is written steadily (about 4 MiB/s at 250 ms), so fan-outs keep coming while a slow
 * consumer is past the bound.
 */
async function writeBacklog (api: TestApp, paceMs = 0): Promise<void> {
  for (let batch = 0; batch < COPIES / 100; batch++) {
    if (batch > 0 && paceMs > 0) await sleep(paceMs)
    await insertCopies(api, 100)
  }
}

function assertEveryIdOnceInOrder (stream: StreamClient, what: string): void {
  const ids = stream.messages.map((message) => Number(message.id))
  assert.equal(ids.length, COPIES + FIRST_EVENTS, `${what}: ${ids.length} events`)
  assert.ok(ids.every((id, i) => i === 0 || id === (ids[i - 1] as number) + 1), `${what}: every id once, in order`)
}

for (const store of testStores()) {
  describe(`a stream's backlog bound (${store})`, () => {
    test('When a consumer reads slowly, a moment at a time, while its backlog passes the bound, then it falls behind, catches up at its own pace and gets every event in order, never cut', async (t) => {
      const api = await buildTestApp(t, { store, env: ENV })
      const base = await listeningOnUnixSocket(t, api)
      await bigOrder(api)
      const reader = await openStream(base, '/v1/events', api.auth)
      const slow = await openStream(base, '/v1/events', api.auth)
      await Promise.all([reader.waitForMessages(FIRST_EVENTS), slow.waitForMessages(FIRST_EVENTS)])
      const slowly = slow.readSlowly(SLOW_READ_BYTES, SLOW_PAUSE_MS)

      // a cut ends the wait at once, saying so, rather than at the wait's limit
      const cut = slow.ended.then((how) => { throw new Error(`the slow consumer's stream ended (${how}) after ${slow.messages.length} events: a consumer that reads was cut`) })
      cut.catch(() => {})

      await writeBacklog(api, 250)
      await Promise.race([reader.waitForMessages(COPIES + FIRST_EVENTS, 60_000), cut])
      const behind = await metricValue(api, 'petstore_event_streams_behind_total')
      await Promise.race([slow.waitForMessages(COPIES + FIRST_EVENTS, 60_000), cut])
      slowly.stop()

      assert.ok(behind >= 1, 'the slow consumer fell behind: its backlog passed the bound (else this test proves nothing)')
      assertEveryIdOnceInOrder(slow, 'the slow consumer')
      assertEveryIdOnceInOrder(reader, 'the reader')
      assert.equal(await metricValue(api, 'petstore_event_streams_ended_total', { reason: 'backlog' }), 0, 'no stream was cut')
      assert.equal(api.app.eventStreams.open, 2, 'both streams are still open')
      slow.close()
      reader.close()
    })

    test('When one consumer stops reading, then it is cut once its backlog passes the bound and it takes nothing for a heartbeat, while a consumer that reads gets every event', async (t) => {
      const api = await buildTestApp(t, { store, env: ENV })
      const base = await listening(api)
      await bigOrder(api)
      const reader = await openStream(base, '/v1/events', api.auth)
      const stalled = await openStream(base, '/v1/events', api.auth)
      await Promise.all([reader.waitForMessages(FIRST_EVENTS), stalled.waitForMessages(FIRST_EVENTS)])
      stalled.stopReading()

      await writeBacklog(api)
      await reader.waitForMessages(COPIES + FIRST_EVENTS, 60_000)
      await eventually(() => stalled.messages.length < COPIES + FIRST_EVENTS, 'the stalled consumer had not everything')
      await eventually(() => api.app.eventStreams.open === 1, 'the stalled stream is cut')
      // a paused socket does not see its connection end until it reads again
      stalled.resumeReading()

      assert.equal(await within(10_000, 'the stalled stream\'s connection never ended', stalled.ended), 'cut')
      assertEveryIdOnceInOrder(reader, 'the reader')
      assert.equal(await metricValue(api, 'petstore_event_streams_ended_total', { reason: 'backlog' }), 1)
      reader.close()
    })
  })
}

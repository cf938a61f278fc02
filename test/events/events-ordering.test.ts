import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import type { Pet } from '../../src/capabilities/pets/pet-schemas.js'
import { buildTestApp, createdPet, patchPet, type TestApp } from '../helpers/build-app.js'
import { mockDate } from '../helpers/clock.js'
import { execSql, freshDatabaseUrl, requiresPostgres } from '../helpers/databases.js'
import { type Event, eventPage, followFeed } from '../helpers/events.js'

// The feed's ordering promise where it can break: several instances on one PostgreSQL database,
// each with its own pool, writing at once while readers follow `next` the whole time.

const WRITERS_PER_INSTANCE = 8
const CHANGES_PER_WRITER = 12
const READERS = 4
// many requests at once in one process: neither the per-key limit nor a slow query is under test
const UNLIMITED = { RATE_LIMIT_MAX: '0', DATABASE_TIMEOUT_MS: '10000' }

async function twoInstances (databaseUrl: string, t: Parameters<typeof buildTestApp>[0]): Promise<[TestApp, TestApp]> {
  const a = await buildTestApp(t, { databaseUrl, env: UNLIMITED })
  const b = await buildTestApp(t, { databaseUrl, withKey: false, env: UNLIMITED })
  return [a, { ...b, key: a.key, auth: a.auth }]
}

/** A writer: creates a pet, then changes it again and again (name and status). */
async function write (api: TestApp, label: string): Promise<void> {
  const pet: Pet = await createdPet(api, { name: label, categoryId: 1 })
  for (let i = 1; i < CHANGES_PER_WRITER; i++) {
    const res = await patchPet(api, pet.id, { name: `${label}-${i}`, status: i % 2 === 1 ? 'pending' : 'available' })
    assert.equal(res.statusCode, 200, res.body)
  }
}

/** A reader: follows `next` until `done()` and a page comes back empty after it; returns every event seen, in order. */
async function follow (api: TestApp, done: () => boolean): Promise<Event[]> {
  const seen: Event[] = []
  let url = '/v1/events?limit=7'
  for (;;) {
    const finished = done()
    const page = await eventPage(api, url)
    seen.push(...page.events)
    url = page.next
    if (page.events.length === 0) {
      if (finished) return seen
      await new Promise((resolve) => setTimeout(resolve, 2))
    }
  }
}

describe('the change feed on several instances (postgres)', requiresPostgres(), () => {
  test(`When ${WRITERS_PER_INSTANCE} writers on each of two instances change pets while ${READERS} readers follow next, then every reader sees every event exactly once, in increasing id order, and nothing else`, async (t) => {
    const databaseUrl = await freshDatabaseUrl(t, 'postgres')
    const instances = await twoInstances(databaseUrl, t)
    let writing = true

    const readers = Array.from({ length: READERS }, async (_, i) => await follow(instances[i % 2] as TestApp, () => !writing))
    await Promise.all(instances.flatMap((api, n) => Array.from({ length: WRITERS_PER_INSTANCE }, async (_, w) => { await write(api, `i${n}-w${w}`) })))
    writing = false
    const seenByReaders = await Promise.all(readers)

    const stored = await execSql(databaseUrl, 'SELECT id FROM events ORDER BY id')
    const storedIds = stored.map((row) => Number(row.id))
    assert.equal(storedIds.length, 2 * WRITERS_PER_INSTANCE * CHANGES_PER_WRITER)
    for (const [i, seen] of seenByReaders.entries()) {
      const ids = seen.map((event) => event.id)
      const disorder = ids.findIndex((id, index) => index > 0 && id <= (ids[index - 1] as number))
      assert.equal(disorder, -1, `reader ${i} saw ${ids[disorder]} after ${ids[disorder - 1]}`)
      assert.deepEqual(ids, storedIds, `reader ${i} saw ${ids.length} of the ${storedIds.length} events`)
    }
    t.diagnostic(`${storedIds.length} events; each of ${READERS} readers saw all of them once, in order`)
  })

  test('When retention runs on two instances at once, then each expired event is deleted once and the feed answers 410 before the newest deleted id', async (t) => {
    mockDate(t)
    const databaseUrl = await freshDatabaseUrl(t, 'postgres')
    const [a, b] = await twoInstances(databaseUrl, t)
    for (let i = 0; i < 40; i++) await createdPet(i % 2 === 0 ? a : b, { name: `Pet ${i}`, categoryId: i })
    const newest = (await followFeed(a)).events.at(-1) as Event
    t.mock.timers.tick(31 * 86_400_000)

    const deleted = await Promise.all([a.app.eventRetention.purge(), b.app.eventRetention.purge()])

    assert.equal(deleted[0] + deleted[1], 40, `deleted ${deleted.join(' and ')}`)
    assert.equal(await a.app.eventRetention.purge(), 0)
    assert.deepEqual(await execSql(databaseUrl, 'SELECT count(*)::int AS left FROM events'), [{ left: 0 }])
    const res = await b.app.inject({ method: 'GET', url: `/v1/events?after=${newest.id - 1}`, headers: b.auth })
    assert.equal(res.statusCode, 410, res.body)
  })
})

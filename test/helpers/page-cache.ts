import assert from 'node:assert/strict'
import { setTimeout as delay } from 'node:timers/promises'
import type { FastifyInstance } from 'fastify'

/**
 * How many times the app has read a list page from its store, as its `/metrics` counts them
 * (`petstore_store_query_duration_seconds_count{method="listPets"}`): a page served from the cache adds none.
 */
export async function storeListReads (app: FastifyInstance): Promise<number> {
  const metric = app.metrics.registry.getSingleMetric('petstore_store_query_duration_seconds')
  assert.ok(metric !== undefined, 'the store query metric is registered')
  // a histogram's samples name their series (_bucket, _sum, _count)
  const values = (await metric.get()).values as Array<{ metricName?: string, labels: Record<string, unknown>, value: number }>
  return values.filter((sample) => sample.metricName === 'petstore_store_query_duration_seconds_count' && sample.labels.method === 'listPets')
    .reduce((sum, sample) => sum + sample.value, 0)
}

/**
 * Waits until the store can tell its list version: at once on SQLite; on PostgreSQL once its
 * LISTEN connection, opened on first use, is up. Until then no page is cached.
 */
export async function untilCaching (app: FastifyInstance): Promise<void> {
  const deadline = Date.now() + 5_000
  while (app.petStore.listVersion() === undefined) {
    assert.ok(Date.now() < deadline, 'the store never reported a list version')
    await delay(10)
  }
}

/**
 * Calls `list` (which asserts what its answer holds) until one call is served from the page cache, adding no
 * store read, or fails after 5 s. On PostgreSQL an instance's own change also reaches it as a notification,
 * which can move the list version once more after a page was read: then the next call reads again.
 */
export async function untilServedFromCache (app: FastifyInstance, list: () => Promise<void>): Promise<void> {
  await untilCaching(app)
  const deadline = Date.now() + 5_000
  for (;;) {
    const reads = await storeListReads(app)
    await list()
    if (await storeListReads(app) === reads) return
    assert.ok(Date.now() < deadline, 'no list was served from the page cache')
    await delay(10)
  }
}

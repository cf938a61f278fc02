import type { BenchContext } from '../_util/bench-context.js'
import { alternate } from '../_util/measure.js'
import { LIST_PATH, log, SMALL_STORE_PETS } from '../_util/plan.js'
import { migrateStore, startService, stopServer } from '../_util/servers.js'
import { seededStore, type BenchStore } from '../_util/stores.js'
import { pairRow, type PairRow } from '../report.js'

/** listPets on a small and on a big SQLite store, in turn: keyset paging should not care how many pets there are. */
export async function storeSize (context: BenchContext): Promise<PairRow> {
  const sizes = [SMALL_STORE_PETS, context.plan.bigStorePets]
  const roles = sizes.map((pets) => `${pets.toLocaleString('en-US')} pets`) as [string, string]
  const comparison = `listPets, ${roles[1]} vs ${roles[0]} (sqlite)`
  const stores: BenchStore[] = []
  const servers = []
  try {
    for (const pets of sizes) {
      log(`sqlite: preparing a store of ${pets.toLocaleString('en-US')} pets`)
      const store = await seededStore('sqlite', pets, context.pgServerUrl, (url) => migrateStore(url, context.apiKey))
      stores.push(store)
      servers.push(await startService(store.url, context.apiKey))
    }
    const rounds = await alternate(context, comparison, servers.map((server, i) => ({ role: roles[i] as string, server, requests: [{ method: 'GET', path: LIST_PATH }] })))
    return pairRow(comparison, roles, rounds)
  } finally {
    for (const server of servers) await stopServer(server)
    for (const store of stores) await store.drop()
  }
}

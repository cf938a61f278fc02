import { setTimeout as sleep } from 'node:timers/promises'
import type { ServerProcess } from '../../tools/harness/server-process.js'
import type { BenchContext } from '../_util/bench-context.js'
import { LIST_PATH, log } from '../_util/plan.js'
import { startService, stopServer } from '../_util/servers.js'
import type { BenchStore } from '../_util/stores.js'

interface ListedPet { id: number, name: string }

/** Gives up on a change that never shows: the figure is then reported as missing, and the run goes on. */
const GIVE_UP_MS = 10_000

/**
 * How soon a change made through another instance shows in this one's cached first page (on PostgreSQL,
 * LISTEN/NOTIFY; on SQLite, `PRAGMA data_version` at each list): a second service (the writer) starts on
 * `store`, and `plan.rounds + 3` times `reader` lists the page twice (so it is cached), the writer renames the
 * page's first pet ('Pet 7' ↔ 'pet 7', the same length), and `reader` lists until the page shows it. Each sample
 * runs from the writer's answer to the reader's answer that showed the change. The pet's name is put back.
 */
export async function crossInstanceList (context: BenchContext, store: BenchStore, reader: ServerProcess): Promise<number[]> {
  const list = async (): Promise<ListedPet[]> => {
    const res = await fetch(`${reader.baseUrl}${LIST_PATH}`, { headers: context.headers })
    if (res.status !== 200) throw new Error(`listPets answered ${res.status}`)
    return await res.json() as ListedPet[]
  }
  const [first] = await list()
  if (first === undefined) throw new Error('the first page is empty')
  const writer = await startService(store.url, context.apiKey)
  const rename = async (name: string): Promise<void> => {
    const res = await fetch(`${writer.baseUrl}/v1/pets/${first.id}`, {
      method: 'PATCH',
      headers: { ...context.headers, 'content-type': 'application/merge-patch+json' },
      body: JSON.stringify({ name })
    })
    if (res.status !== 200) throw new Error(`updatePet answered ${res.status}: ${await res.text()}`)
  }
  const other = first.name.toLowerCase() === first.name ? first.name.toUpperCase() : first.name.toLowerCase()
  const samples: number[] = []
  let name = first.name
  try {
    for (let round = 0; round < context.plan.rounds + 3; round++) {
      await list()
      await list()
      name = name === first.name ? other : first.name
      await rename(name)
      const renamedAt = performance.now()
      for (;;) {
        const shown = (await list()).find((pet) => pet.id === first.id)?.name === name
        const ms = performance.now() - renamedAt
        if (shown) {
          samples.push(ms)
          break
        }
        if (ms > GIVE_UP_MS) throw new Error(`the change was not listed within ${GIVE_UP_MS} ms`)
        await sleep(1)
      }
    }
    log(`${store.kind}: a change through another instance listed after ${samples.map((ms) => ms.toFixed(1)).join(', ')} ms`)
    return samples
  } finally {
    if (name !== first.name) await rename(first.name)
    await stopServer(writer)
  }
}

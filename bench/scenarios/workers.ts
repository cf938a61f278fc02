import { LOAD_GENERATOR_CPU, PINNING, SERVER_CPU } from '../../tools/harness/cpu-pinning.js'
import type { BenchContext } from '../_util/bench-context.js'
import { alternate } from '../_util/measure.js'
import { LIST_PATH } from '../_util/plan.js'
import { startService, stopServer } from '../_util/servers.js'
import type { BenchStore } from '../_util/stores.js'
import { pairRow, type PairRow } from '../report.js'

/**
 * listPets on one process and on `WORKERS=2` (a primary and two workers), in turn, on `store`.
 * The workers may use both CPUs, so on a two-core machine they share one with the load generator.
 */
export async function workers (context: BenchContext, store: BenchStore): Promise<{ row: PairRow, note: string }> {
  const roles: [string, string] = ['one process', 'WORKERS=2']
  const one = await startService(store.url, context.apiKey)
  try {
    const two = await startService(store.url, context.apiKey, { cpuList: `${SERVER_CPU},${LOAD_GENERATOR_CPU}`, env: { WORKERS: '2' } })
    try {
      const forked = two.processTree().length - 1
      if (forked < 2) throw new Error(`WORKERS=2 started ${forked} worker process(es)`)
      const requests = [{ method: 'GET', path: LIST_PATH }] as const
      const rounds = await alternate(context, 'WORKERS=2 vs one process', [{ role: roles[0], server: one, requests }, { role: roles[1], server: two, requests }])
      const note = PINNING.available
        ? `WORKERS=2 runs on CPUs ${SERVER_CPU},${LOAD_GENERATOR_CPU}, one process on CPU ${SERVER_CPU}: the second worker shares CPU ${LOAD_GENERATOR_CPU} with the load generator, so 1.6× is out of reach on a two-core machine.`
        : 'WORKERS=2: not pinned, so the workers and the load generator share every CPU.'
      return { row: pairRow('WORKERS=2 vs one process, listPets (sqlite)', roles, rounds), note }
    } finally {
      await stopServer(two)
    }
  } finally {
    await stopServer(one)
  }
}

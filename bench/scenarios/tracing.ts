import { OtlpReceiver } from '../../tools/harness/otlp-receiver.js'
import type { BenchContext } from '../_util/bench-context.js'
import { alternate } from '../_util/measure.js'
import { LIST_PATH } from '../_util/plan.js'
import { startService, stopServer } from '../_util/servers.js'
import type { BenchStore } from '../_util/stores.js'
import { pairRow, type PairRow } from '../report.js'

/**
 * listPets with OpenTelemetry unset (as every other row runs the service) and with
 * `OTEL_EXPORTER_OTLP_ENDPOINT` set to a local receiver, in turn, on `store`: what tracing costs when
 * on (every request sampled, the default), and that unset it costs nothing beyond the service's own row.
 */
export async function tracing (context: BenchContext, store: BenchStore): Promise<{ row: PairRow, note: string }> {
  const roles: [string, string] = ['OTEL unset', 'OTEL set']
  // in the runner's process, on the load generator's CPU: the collector's work is not the service's
  const receiver = await OtlpReceiver.start({ keep: false })
  try {
    const off = await startService(store.url, context.apiKey)
    try {
      const on = await startService(store.url, context.apiKey, { env: { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' } })
      try {
        const requests = [{ method: 'GET', path: LIST_PATH }] as const
        const rounds = await alternate(context, 'OTEL set vs unset', [{ role: roles[0], server: off, requests }, { role: roles[1], server: on, requests }])
        if (receiver.exports === 0) throw new Error('the service with OTEL set exported no spans')
        const note = 'Tracing: with OTEL_EXPORTER_OTLP_ENDPOINT unset no OpenTelemetry module is loaded (test/tracing/tracing-off.test.ts), ' +
          'so "OTEL unset" is the service as every other row measures it; "OTEL set" exports every request\'s spans (sampler parentbased_always_on, ' +
          `the SDK's default) to a local receiver, which received ${receiver.exports} batches.`
        return { row: pairRow('OTEL set vs unset, listPets (sqlite)', roles, rounds), note }
      } finally {
        await stopServer(on)
      }
    } finally {
      await stopServer(off)
    }
  } finally {
    await receiver.close()
  }
}

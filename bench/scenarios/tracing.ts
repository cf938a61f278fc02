import { OtlpReceiver } from '../../tools/harness/otlp-receiver.js'
import type { BenchContext } from '../_util/bench-context.js'
import { alternate } from '../_util/measure.js'
import { LIST_PATH } from '../_util/plan.js'
import { startService, stopServer } from '../_util/servers.js'
import type { BenchStore } from '../_util/stores.js'
import { pairRow, TRACING_COMPARISONS, type PairRow } from '../report.js'

/** The three servers of the tracing comparison, in the order they are measured. */
export const TRACING_ROLES = ['tracing off', 'ratio 0.1', 'all sampled'] as const

/**
 * listPets with OpenTelemetry unset (as every other row runs the service), with
 * `OTEL_TRACES_SAMPLER=parentbased_traceidratio` at 0.1, and with every request sampled (the default
 * sampler), all three exporting to a local receiver and alternated in the same rounds on `store`: what
 * tracing costs when production leaves it on at a tenth, and when everything is traced.
 */
export async function tracing (context: BenchContext, store: BenchStore): Promise<{ rows: PairRow[], note: string }> {
  // in the runner's process, on the load generator's CPU: the collector's work is not the service's
  const receiver = await OtlpReceiver.start({ keep: false })
  const exporting = { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' }
  const envs: Record<typeof TRACING_ROLES[number], Record<string, string> | undefined> = {
    'tracing off': undefined,
    'ratio 0.1': { ...exporting, OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: '0.1' },
    'all sampled': exporting
  }
  const servers = []
  try {
    for (const role of TRACING_ROLES) {
      const env = envs[role]
      servers.push({ role, server: await startService(store.url, context.apiKey, env === undefined ? {} : { env }), requests: [{ method: 'GET', path: LIST_PATH }] as const })
    }
    const rounds = await alternate(context, 'tracing', servers)
    if (receiver.exports === 0) throw new Error('the services with tracing on exported no spans')
    const [off, ratio, all] = TRACING_ROLES
    const note = 'Tracing: with OTEL_EXPORTER_OTLP_ENDPOINT unset no OpenTelemetry module is loaded (test/tracing/tracing-off.test.ts), ' +
      `so "${off}" is the service as every other row measures it; "${ratio}" runs OTEL_TRACES_SAMPLER=parentbased_traceidratio with OTEL_TRACES_SAMPLER_ARG=0.1 ` +
      `(a tenth of the requests traced: the wrk requests carry no traceparent), "${all}" the default sampler (parentbased_always_on); ` +
      `all three were alternated in the same rounds, exporting to a local receiver, which received ${receiver.exports} batches.`
    return {
      rows: [
        pairRow(TRACING_COMPARISONS.ratio, [off, ratio], { [off]: rounds[off] ?? [], [ratio]: rounds[ratio] ?? [] }),
        pairRow(TRACING_COMPARISONS.all, [off, all], { [off]: rounds[off] ?? [], [all]: rounds[all] ?? [] })
      ],
      note
    }
  } finally {
    for (const { server } of servers) await stopServer(server)
    await receiver.close()
  }
}

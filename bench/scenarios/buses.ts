import { scratchStore, type StoreKind } from '../../tools/harness/scratch-store.js'
import type { ServerProcess } from '../../tools/harness/server-process.js'
import type { BenchContext } from '../_util/bench-context.js'
import { withBusReaders, type BusReader } from '../_util/bus-readers.js'
import { burstCreates, pacedCreates, petIds, quantile, type Created } from '../_util/create-load.js'
import { median } from '../_util/measure.js'
import { log } from '../_util/plan.js'
import { startService, stopServer } from '../_util/servers.js'
import { commitToReceiptMs } from '../_util/webhook-service.js'
import type { Check } from '../report.js'

/** The message buses' targets (issue 41): reported, never enforced. */
export const BUS_TARGETS = {
  /** Events a second stored in JetStream and confirmed by RabbitMQ, a backlog published while a burst of creates runs. */
  natsPerSecond: 5_000,
  rabbitMqPerSecond: 2_000,
  /** Commit (the create's 201) to the bench consumer's receipt, p99, on each bus, at {@link pacedRate} creates/s. */
  commitToReceiptP99Ms: 250,
  pacedRate: 25,
  /** createPet's p50 at {@link createRate} creates/s with both buses on, × with none, alternated in one run. */
  createP50WithBuses: 1.25,
  createRate: 100
} as const

/** How long each part runs (the quick run's figures are few samples). */
function sizes (quick: boolean): { backlog: number, burst: number, pacedSeconds: number, roundSeconds: number } {
  return quick
    ? { backlog: 3_000, burst: 1_500, pacedSeconds: 6, roundSeconds: 3 }
    : { backlog: 20_000, burst: 6_000, pacedSeconds: 20, roundSeconds: 10 }
}

// after the load, how long events still owed may take before they count as missing
const DRAIN_MS = 30_000
const WARM_UP_TIMEOUT_MS = 20_000

const ms = (value: number): string => Number.isFinite(value) ? `${value.toFixed(value < 10 ? 1 : 0)} ms` : 'never'
const BUS_LABEL = { nats: 'JetStream', rabbitmq: 'RabbitMQ' } as const

function failed (created: readonly Created[]): string {
  const bad = created.filter((c) => c.status !== 201).length
  return bad === 0 ? '' : ` (${bad} creates not answered 201)`
}

/** The service on `storeUrl` publishing to `readers`' buses, warmed up: one create received on each. */
async function startBusService (context: BenchContext, storeUrl: string, readers: readonly BusReader[]): Promise<ServerProcess> {
  const env = Object.assign({}, ...readers.map((reader) => reader.env)) as Record<string, string>
  const service = await startService(storeUrl, context.apiKey, { env })
  try {
    const warmUp = petIds(await burstCreates(service.baseUrl, context.headers, 1, 1))
    for (const reader of readers) {
      if (!await reader.waitForSubjects(warmUp, WARM_UP_TIMEOUT_MS)) throw new Error(`the warm-up create did not reach ${BUS_LABEL[reader.bus]} within ${WARM_UP_TIMEOUT_MS} ms`)
    }
    return service
  } catch (error) {
    await stopServer(service)
    throw error
  }
}

/**
 * Target 1, one bus: the service with that bus on (its position now set), stopped; a backlog of creates made
 * through a service without buses; then the service with the bus again and, at once, a burst of creates beside
 * the relay publishing the backlog. The rate is the backlog's events ÷ the time from its first to its last message
 * as the broker stored it (JetStream's stream timestamps) or as the bench's consumer received it (RabbitMQ).
 * `installation`: another build's (copyInstallation), to A/B a lever of the relay.
 */
export async function busThroughput (context: BenchContext, kind: StoreKind, reader: BusReader, installation?: string): Promise<Check> {
  const { backlog, burst } = sizes(context.plan.quick)
  const target = reader.bus === 'nats' ? BUS_TARGETS.natsPerSecond : BUS_TARGETS.rabbitMqPerSecond
  const store = await scratchStore(kind, 'buses', context.pgServerUrl)
  try {
    await stopServer(await startBusService(context, store.url, [reader]))
    const quiet = await startService(store.url, context.apiKey, { installation })
    let backlogIds: Set<string>
    try {
      backlogIds = petIds(await burstCreates(quiet.baseUrl, context.headers, backlog))
    } finally {
      await stopServer(quiet)
    }
    const service = await startService(store.url, context.apiKey, { env: reader.env, installation })
    let burstSpan: { from: number, to: number }
    let created: Created[]
    try {
      const from = performance.now()
      created = await burstCreates(service.baseUrl, context.headers, burst)
      burstSpan = { from, to: performance.now() }
      await reader.waitForSubjects(new Set([...backlogIds, ...petIds(created)]), DRAIN_MS)
    } finally {
      await stopServer(service)
    }
    const backlogReceipts = reader.receipts.filter((receipt) => receipt.type === 'pet.created' && backlogIds.has(receipt.subject))
    // JetStream's stored times are the server's clock (epoch ms); RabbitMQ's are the consumer's receipts (performance.now())
    const times = backlogReceipts.map((receipt) => receipt.storedAt ?? receipt.at)
    const first = Math.min(...times)
    const last = Math.max(...times)
    const spanSeconds = (last - first) / 1000
    const perSecond = times.length < 2 || spanSeconds <= 0 ? NaN : (times.length - 1) / spanSeconds
    const receivedFirst = Math.min(...backlogReceipts.map((receipt) => receipt.at))
    const receivedLast = Math.max(...backlogReceipts.map((receipt) => receipt.at))
    const overlap = Math.max(0, Math.min(receivedLast, burstSpan.to) - Math.max(receivedFirst, burstSpan.from)) / Math.max(1, receivedLast - receivedFirst)
    const how = reader.bus === 'nats' ? 'first to last stored (stream timestamps)' : 'first to last received by the bench consumer'
    const text = `${backlogReceipts.length} of ${backlogIds.size} backlog events over ${spanSeconds.toFixed(2)} s, ${how}; the burst of ${burst} creates ` +
      `(${((burstSpan.to - burstSpan.from) / 1000).toFixed(1)} s) ran during ${(overlap * 100).toFixed(0)}% of it`
    log(`buses (${kind}): ${BUS_LABEL[reader.bus]} throughput: ${perSecond.toFixed(0)} events/s; ${text}`)
    return {
      check: `buses (${kind}): events/s published to ${BUS_LABEL[reader.bus]} (that bus alone), a backlog of ${backlog} beside a burst of ${burst} creates`,
      measured: `${Number.isFinite(perSecond) ? perSecond.toFixed(0) : '–'}/s (${text})${failed(created)}`,
      target: `≥ ${target.toLocaleString('en-US')}/s`,
      met: Number.isFinite(perSecond) ? perSecond >= target : undefined
    }
  } finally {
    await store.drop()
  }
}

async function natsThroughput (context: BenchContext, kind: StoreKind): Promise<Check[]> {
  return await withBusReaders(async ({ nats }) => [await busThroughput(context, kind, nats)])
}

async function rabbitMqThroughput (context: BenchContext, kind: StoreKind): Promise<Check[]> {
  return await withBusReaders(async ({ rabbitmq }) => [await busThroughput(context, kind, rabbitmq)])
}

/** A store of its own, both buses on, warmed up; stopped and dropped after `work`. */
async function withBothBuses<T> (context: BenchContext, kind: StoreKind, work: (service: ServerProcess, readers: readonly BusReader[]) => Promise<T>): Promise<T> {
  return await withBusReaders(async ({ nats, rabbitmq }) => {
    const store = await scratchStore(kind, 'buses', context.pgServerUrl)
    try {
      const service = await startBusService(context, store.url, [nats, rabbitmq])
      try {
        return await work(service, [nats, rabbitmq])
      } finally {
        await stopServer(service)
      }
    } finally {
      await store.drop()
    }
  })
}

/** Target 2: both buses on, creates at a steady 25/s; each bus's commit (201) → consumer receipt. */
async function commitToReceipt (context: BenchContext, kind: StoreKind): Promise<Check[]> {
  const { pacedSeconds } = sizes(context.plan.quick)
  return await withBothBuses(context, kind, async (service, readers) => {
    const created = await pacedCreates(service.baseUrl, context.headers, BUS_TARGETS.pacedRate, pacedSeconds)
    const ids = petIds(created)
    return await Promise.all(readers.map(async (reader) => {
      await reader.waitForSubjects(ids, DRAIN_MS)
      const latencies = commitToReceiptMs(created, reader.receipts.filter((r) => r.type === 'pet.created').map((r) => ({ petId: r.subject, at: r.at })))
        .map((value) => Number.isNaN(value) ? Infinity : value)
      const missing = latencies.filter((value) => value === Infinity).length
      const p99 = quantile(latencies, 0.99)
      const text = `p50 ${ms(quantile(latencies, 0.5))}, p99 ${ms(p99)}, slowest ${ms(quantile(latencies, 1))}; ${latencies.length} creates` +
        `${missing > 0 ? `, ${missing} never received within ${DRAIN_MS / 1000} s` : ''}`
      log(`buses (${kind}): ${BUS_LABEL[reader.bus]} commit to receipt at ${BUS_TARGETS.pacedRate}/s: ${text}`)
      return {
        check: `buses (${kind}): commit (201) → ${BUS_LABEL[reader.bus]} consumer receipt p99, ${BUS_TARGETS.pacedRate} creates/s for ${pacedSeconds} s, both buses on`,
        measured: `${ms(p99)} (${text})${failed(created)}`,
        target: `≤ ${BUS_TARGETS.commitToReceiptP99Ms} ms`,
        met: p99 <= BUS_TARGETS.commitToReceiptP99Ms
      }
    }))
  })
}

/** Target 3: creates at a steady 100/s on a service without buses and on one with both, alternated round by round. */
async function createCostOfBuses (context: BenchContext, kind: StoreKind): Promise<Check[]> {
  const { roundSeconds } = sizes(context.plan.quick)
  const rate = BUS_TARGETS.createRate
  const store = await scratchStore(kind, 'buses', context.pgServerUrl)
  try {
    const without = await startService(store.url, context.apiKey)
    try {
      return await withBothBuses(context, kind, async (withBuses, readers) => {
        const p50s: Record<'without' | 'with', number[]> = { without: [], with: [] }
        const ratios: number[] = []
        let last: Created[] = []
        for (let round = 0; round < context.plan.rounds; round++) {
          const roundP50: Partial<Record<'without' | 'with', number>> = {}
          for (const [role, service] of [['without', without], ['with', withBuses]] as const) {
            if (round === 0) await pacedCreates(service.baseUrl, context.headers, rate, context.plan.warmupSeconds)
            const created = await pacedCreates(service.baseUrl, context.headers, rate, roundSeconds)
            roundP50[role] = quantile(created.filter((c) => c.status === 201).map((c) => c.answeredAt - c.sentAt), 0.5)
            p50s[role].push(roundP50[role])
            if (role === 'with') last = created
            log(`buses (${kind}): createPet at ${rate}/s ${role} buses, round ${round + 1}/${context.plan.rounds}: p50 ${ms(roundP50[role])}${failed(created)}`)
          }
          if (roundP50.with !== undefined && roundP50.without !== undefined && roundP50.without > 0) ratios.push(roundP50.with / roundP50.without)
        }
        // the buses kept up: the last round's events all arrived
        const arrived = await Promise.all(readers.map(async (reader) => await reader.waitForSubjects(petIds(last), DRAIN_MS)))
        const ratio = median(ratios)
        return [{
          check: `buses (${kind}): createPet p50 at ${rate} creates/s with both buses on, × with none (median of ${context.plan.rounds} rounds' ratios)`,
          measured: `${ratio === undefined ? '–' : ratio.toFixed(2)}× (p50 ${ms(median(p50s.with) ?? NaN)} with, ${ms(median(p50s.without) ?? NaN)} without` +
            `${arrived.every(Boolean) ? '' : '; the last round\'s events did NOT all reach the buses'})`,
          target: `≤ ${BUS_TARGETS.createP50WithBuses}×`,
          met: ratio === undefined ? undefined : ratio <= BUS_TARGETS.createP50WithBuses
        }]
      })
    } finally {
      await stopServer(without)
    }
  } finally {
    await store.drop()
  }
}

/** The bus scenarios, in this order on `kind`; each one's failure is the harness's, reported by `attempt`. */
export const BUS_SCENARIOS = [
  { name: 'JetStream throughput', measure: natsThroughput },
  { name: 'RabbitMQ throughput', measure: rabbitMqThroughput },
  { name: 'commit → receipt', measure: commitToReceipt },
  { name: 'createPet with both buses', measure: createCostOfBuses }
] as const satisfies ReadonlyArray<{ name: string, measure: (context: BenchContext, kind: StoreKind) => Promise<Check[]> }>

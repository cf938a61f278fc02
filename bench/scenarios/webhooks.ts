import type { StoreKind } from '../../tools/harness/scratch-store.js'
import type { BenchContext } from '../_util/bench-context.js'
import { burstCreates, pacedCreates, petIds, quantile, type Created } from '../_util/create-load.js'
import { median } from '../_util/measure.js'
import { log } from '../_util/plan.js'
import { addReceivers, commitToReceiptMs, withWebhookService } from '../_util/webhook-service.js'
import type { Check } from '../report.js'

/** The webhook targets (issue 30): reported, never enforced. */
export const WEBHOOK_TARGETS = {
  /** Commit (the create's 201) to the receipt of its event, p99, at {@link pacedRate} creates/s to a receiver answering at once. */
  commitToReceiptP99Ms: 100,
  pacedRate: 25,
  /** Deliveries a second to one endpoint that answers each after {@link slowAnswerMs}, during a burst of creates. */
  slowEndpointPerSecond: 200,
  slowAnswerMs: 50,
  /** createPet's p50 at {@link createRate} creates/s with one healthy endpoint, × without an endpoint, alternated in one run. */
  createP50WithEndpoint: 1.25,
  createRate: 100,
  /** The healthy endpoint's commit-to-receipt p99 beside {@link blackholes} endpoints that never answer, at {@link pacedRate} creates/s. */
  healthyBesideBlackholesP99Ms: 1_000,
  blackholes: 8,
  /** With {@link fairConcurrency} slots for {@link fairEndpoints} endpoints with a backlog, the least-served endpoint's deliveries ÷ the most-served's. */
  fairShare: 0.25,
  fairEndpoints: 12,
  fairConcurrency: 2,
  /** An endpoint registered with this `rateLimit`, answering in {@link slowAnswerMs}, gets a burst: never more than this many deliveries in any second. */
  rateLimit: 20
} as const

/** How long each part runs: the quick run's figures are few samples (a p99 of 150 is nearly the slowest). */
function durations (quick: boolean): { pacedSeconds: number, blackholeSeconds: number, roundSeconds: number, burst: number, fairBurst: number } {
  return quick
    ? { pacedSeconds: 6, blackholeSeconds: 14, roundSeconds: 3, burst: 500, fairBurst: 300 }
    : { pacedSeconds: 20, blackholeSeconds: 30, roundSeconds: 10, burst: 2_000, fairBurst: 1_000 }
}

// after the load, how long deliveries still owed may take before they count as missing
const DRAIN_MS = 20_000

/** A duration for the report (`never`: not received). */
export const ms = (value: number): string => Number.isFinite(value) ? `${value.toFixed(value < 10 ? 1 : 0)} ms` : 'never'

/** p50, p99 and the slowest of commit-to-receipt times (NaN: never received within `drainMs`, counted as slower than any). */
export function describeLatencies (values: readonly number[], drainMs = DRAIN_MS): { p50: number, p99: number, text: string } {
  const ranked = values.map((value) => Number.isNaN(value) ? Infinity : value)
  const missing = values.filter(Number.isNaN).length
  const p50 = quantile(ranked, 0.5)
  const p99 = quantile(ranked, 0.99)
  return { p50, p99, text: `p50 ${ms(p50)}, p99 ${ms(p99)}, slowest ${ms(quantile(ranked, 1))}; ${values.length} creates${missing > 0 ? `, ${missing} never delivered within ${drainMs / 1000} s` : ''}` }
}

/** The creates not answered 201, counted by status, for the report; empty when every one was. */
export function failed (created: readonly Created[]): string {
  const statuses = created.filter((c) => c.status !== 201).map((c) => c.status === 0 ? 'no answer' : String(c.status))
  if (statuses.length === 0) return ''
  const counts = [...new Set(statuses)].map((status) => `${statuses.filter((s) => s === status).length} × ${status}`)
  return ` (creates not answered 201: ${counts.join(', ')})`
}

/** Target 1: one receiver answering at once, creates at a steady 25/s. */
async function commitToReceipt (context: BenchContext, kind: StoreKind): Promise<Check> {
  const { pacedSeconds } = durations(context.plan.quick)
  return await withWebhookService(context, kind, [{ answerAfterMs: 0 }], {}, async ({ service, receivers: [receiver] }) => {
    const created = await pacedCreates(service.baseUrl, context.headers, WEBHOOK_TARGETS.pacedRate, pacedSeconds)
    await receiver?.waitForPets(petIds(created), DRAIN_MS)
    const { p99, text } = describeLatencies(commitToReceiptMs(created, receiver?.receipts ?? []))
    log(`webhooks (${kind}): commit to receipt at ${WEBHOOK_TARGETS.pacedRate}/s: ${text}`)
    return {
      check: `webhooks (${kind}): commit (201) → receipt p99, ${WEBHOOK_TARGETS.pacedRate} creates/s for ${pacedSeconds} s, receiver answering at once`,
      measured: `${ms(p99)} (${text})${failed(created)}`,
      target: `≤ ${WEBHOOK_TARGETS.commitToReceiptP99Ms} ms`,
      met: p99 <= WEBHOOK_TARGETS.commitToReceiptP99Ms
    }
  })
}

/** Target 2: one endpoint answering in 50 ms, a burst of creates as fast as 50 clients get them answered. */
async function slowEndpointThroughput (context: BenchContext, kind: StoreKind): Promise<Check> {
  const { burst } = durations(context.plan.quick)
  return await withWebhookService(context, kind, [{ answerAfterMs: WEBHOOK_TARGETS.slowAnswerMs }], {}, async ({ service, receivers: [receiver] }) => {
    const started = performance.now()
    const created = await burstCreates(service.baseUrl, context.headers, burst)
    const burstSeconds = (performance.now() - started) / 1000
    const wanted = petIds(created)
    await receiver?.waitForPets(wanted, DRAIN_MS + burst * 1000 / WEBHOOK_TARGETS.slowEndpointPerSecond)
    const times = (receiver?.receipts ?? []).filter((receipt) => wanted.has(receipt.petId)).map((receipt) => receipt.at)
    const spanSeconds = times.length < 2 ? NaN : (Math.max(...times) - Math.min(...times)) / 1000
    const perSecond = (times.length - 1) / spanSeconds
    const text = `${times.length} of ${wanted.size} delivered over ${spanSeconds.toFixed(1)} s (first to last receipt); the ${burst} creates took ${burstSeconds.toFixed(1)} s`
    log(`webhooks (${kind}): endpoint answering in ${WEBHOOK_TARGETS.slowAnswerMs} ms: ${perSecond.toFixed(0)} deliveries/s; ${text}`)
    return {
      check: `webhooks (${kind}): deliveries/s to one endpoint answering in ${WEBHOOK_TARGETS.slowAnswerMs} ms, a burst of ${burst} creates`,
      measured: `${Number.isFinite(perSecond) ? perSecond.toFixed(0) : '–'}/s (${text})${failed(created)}`,
      target: `≥ ${WEBHOOK_TARGETS.slowEndpointPerSecond}/s`,
      met: Number.isFinite(perSecond) ? perSecond >= WEBHOOK_TARGETS.slowEndpointPerSecond : undefined
    }
  })
}

/** Target 6: the endpoint of target 2 registered with a rate limit gets the same kind of burst: no second sees more than the limit. */
async function rateLimitHeld (context: BenchContext, kind: StoreKind): Promise<Check> {
  const limit = WEBHOOK_TARGETS.rateLimit
  const burst = context.plan.quick ? 4 * limit : 10 * limit
  return await withWebhookService(context, kind, [{ answerAfterMs: WEBHOOK_TARGETS.slowAnswerMs, rateLimit: limit }], {}, async ({ service, receivers: [receiver] }) => {
    const created = await burstCreates(service.baseUrl, context.headers, burst)
    const burstEnded = performance.now()
    const wanted = petIds(created)
    await receiver?.waitForPets(wanted, DRAIN_MS + burst * 1000 / limit)
    const times = (receiver?.receipts ?? []).filter((receipt) => wanted.has(receipt.petId)).map((receipt) => receipt.at).sort((a, b) => a - b)
    // the most receipts within one second, a window starting at each receipt; counted once the burst has ended: while this
    // process sends it, the receiver (in this process too) sees requests late, and the next ones early
    const after = times.filter((at) => at >= burstEnded)
    const most = Math.max(0, ...after.map((start) => after.filter((at) => at >= start && at < start + 1000).length))
    // how close the limit allows: the shortest time in which limit + 1 of them arrived (a second or more when the limit held)
    const shortest = Math.min(...after.slice(limit).map((at, i) => at - (after[i] ?? 0)))
    const spanSeconds = times.length < 2 ? NaN : ((times.at(-1) ?? 0) - (times[0] ?? 0)) / 1000
    const text = `${times.length} of ${wanted.size} delivered over ${spanSeconds.toFixed(1)} s, ${((times.length - 1) / spanSeconds).toFixed(1)}/s on average; ` +
      `the most in one second ${most} (of the ${after.length} received after the burst's ${burst} creates were answered; the shortest time ${limit + 1} arrived in ${ms(shortest)})`
    log(`webhooks (${kind}): endpoint with rateLimit ${limit}, answering in ${WEBHOOK_TARGETS.slowAnswerMs} ms: ${text}`)
    return {
      check: `webhooks (${kind}): an endpoint with rateLimit ${limit}, answering in ${WEBHOOK_TARGETS.slowAnswerMs} ms, a burst of ${burst} creates: the most deliveries in any second`,
      measured: `${most} (${text})${failed(created)}`,
      target: `≤ ${limit}, every one delivered`,
      met: times.length === wanted.size && most <= limit
    }
  })
}

/** createPet's p50 (send to 201) over a steady run; NaN when none was answered 201. */
function createP50 (created: readonly Created[]): number {
  return quantile(created.filter((c) => c.status === 201).map((c) => c.answeredAt - c.sentAt), 0.5)
}

/** Target 3: creates at a steady 100/s on a service without endpoints and on one with a healthy endpoint, alternated round by round. */
async function createCostOfDelivery (context: BenchContext, kind: StoreKind): Promise<Check> {
  const { roundSeconds } = durations(context.plan.quick)
  const rate = WEBHOOK_TARGETS.createRate
  return await withWebhookService(context, kind, [], {}, async (without) => await withWebhookService(context, kind, [{ answerAfterMs: 0 }], {}, async (withEndpoint) => {
    const p50s: Record<'without' | 'with', number[]> = { without: [], with: [] }
    const ratios: number[] = []
    for (let round = 0; round < context.plan.rounds; round++) {
      const roundP50: Partial<Record<'without' | 'with', number>> = {}
      for (const [role, { service }] of [['without', without], ['with', withEndpoint]] as const) {
        if (round === 0) await pacedCreates(service.baseUrl, context.headers, rate, context.plan.warmupSeconds)
        const created = await pacedCreates(service.baseUrl, context.headers, rate, roundSeconds)
        roundP50[role] = createP50(created)
        p50s[role].push(roundP50[role])
        log(`webhooks (${kind}): createPet at ${rate}/s ${role} an endpoint, round ${round + 1}/${context.plan.rounds}: p50 ${ms(roundP50[role])}${failed(created)}`)
      }
      if (roundP50.with !== undefined && roundP50.without !== undefined && roundP50.without > 0) ratios.push(roundP50.with / roundP50.without)
    }
    const ratio = median(ratios)
    return {
      check: `webhooks (${kind}): createPet p50 at ${rate} creates/s with one healthy endpoint, × without (median of ${context.plan.rounds} rounds' ratios)`,
      measured: `${ratio === undefined ? '–' : ratio.toFixed(2)}× (p50 ${ms(median(p50s.with) ?? NaN)} with, ${ms(median(p50s.without) ?? NaN)} without)`,
      target: `≤ ${WEBHOOK_TARGETS.createP50WithEndpoint}×`,
      met: ratio === undefined ? undefined : ratio <= WEBHOOK_TARGETS.createP50WithEndpoint
    }
  }))
}

/** Target 4: eight endpoints that accept the connection and never answer go dark beside a healthy one, under a steady 25 creates/s. */
async function healthyBesideBlackholes (context: BenchContext, kind: StoreKind): Promise<Check> {
  const { blackholeSeconds } = durations(context.plan.quick)
  return await withWebhookService(context, kind, [{ answerAfterMs: 0 }], {}, async ({ storeUrl, service, receivers: [healthy] }) => {
    // registered once the dispatcher runs (the healthy endpoint has had its warm-up): they are new, so not known to fail
    const holes = await addReceivers(storeUrl, Array.from({ length: WEBHOOK_TARGETS.blackholes }, () => 'blackhole' as const))
    try {
      const created = await pacedCreates(service.baseUrl, context.headers, WEBHOOK_TARGETS.pacedRate, blackholeSeconds)
      const held = holes.reduce((sum, hole) => sum + hole.connections, 0)
      await healthy?.waitForPets(petIds(created), DRAIN_MS)
      const { p99, text } = describeLatencies(commitToReceiptMs(created, healthy?.receipts ?? []))
      log(`webhooks (${kind}): healthy endpoint beside ${holes.length} blackholes: ${text}; ${held} connections held by the blackholes at the end`)
      return {
        check: `webhooks (${kind}): commit → receipt p99 of a healthy endpoint beside ${holes.length} that never answer, ${WEBHOOK_TARGETS.pacedRate} creates/s for ${blackholeSeconds} s (WEBHOOK_TIMEOUT_MS default)`,
        measured: `${ms(p99)} (${text}; ${held} connections held by the blackholes at the end)${failed(created)}`,
        target: `≤ ${WEBHOOK_TARGETS.healthyBesideBlackholesP99Ms} ms`,
        met: p99 <= WEBHOOK_TARGETS.healthyBesideBlackholesP99Ms
      }
    } finally {
      await Promise.all(holes.map(async (hole) => await hole.close()))
    }
  })
}

/**
 * Target 5: twelve endpoints answering at once, two slots (WEBHOOK_CONCURRENCY=2), a burst of creates queued for all: each
 * endpoint's deliveries counted until the first one has them all (or the drain time ends).
 */
async function fairEndpoints (context: BenchContext, kind: StoreKind): Promise<Check> {
  const { fairBurst } = durations(context.plan.quick)
  const { fairEndpoints: endpoints, fairConcurrency: concurrency } = WEBHOOK_TARGETS
  const behaviours = Array.from({ length: endpoints }, () => ({ answerAfterMs: 0 }))
  return await withWebhookService(context, kind, behaviours, { WEBHOOK_CONCURRENCY: String(concurrency) }, async ({ service, receivers }) => {
    const created = await burstCreates(service.baseUrl, context.headers, fairBurst)
    const wanted = petIds(created)
    await Promise.all(receivers.map(async (receiver) => await receiver.waitForPets(wanted, DRAIN_MS * 3)))
    const times = receivers.map((receiver) => receiver.receipts.filter((receipt) => wanted.has(receipt.petId)).map((receipt) => receipt.at))
    // the moment the first endpoint had every delivery: after it, the most-served cannot be served more
    const cutoff = Math.min(...times.map((at) => at.length >= wanted.size ? Math.max(...at) : Infinity))
    const counts = times.map((at) => at.filter((t) => t <= cutoff).length)
    const least = Math.min(...counts)
    const most = Math.max(...counts)
    const share = most === 0 ? NaN : least / most
    const text = `deliveries per endpoint until the first had all ${wanted.size}: least ${least}, most ${most}; every one served: ${least > 0 ? 'yes' : 'NO'}`
    log(`webhooks (${kind}): ${endpoints} endpoints, ${concurrency} slots: ${text} (${counts.join(', ')})`)
    return {
      check: `webhooks (${kind}): ${endpoints} endpoints with a backlog of ${fairBurst} creates, WEBHOOK_CONCURRENCY=${concurrency}: least-served ÷ most-served`,
      measured: `${Number.isFinite(share) ? share.toFixed(2) : '–'} (${text})${failed(created)}`,
      target: `≥ ${WEBHOOK_TARGETS.fairShare}, every endpoint served`,
      met: Number.isFinite(share) ? least > 0 && share >= WEBHOOK_TARGETS.fairShare : undefined
    }
  })
}

/** The webhook scenarios, in this order on `kind`; each one's failure is the harness's, reported by `attempt`. */
export const WEBHOOK_SCENARIOS = [
  { name: 'commit → receipt', measure: commitToReceipt },
  { name: 'endpoint answering in 50 ms', measure: slowEndpointThroughput },
  { name: 'rate limit', measure: rateLimitHeld },
  { name: 'createPet with an endpoint', measure: createCostOfDelivery },
  { name: 'beside blackholes', measure: healthyBesideBlackholes },
  { name: 'fair endpoints', measure: fairEndpoints }
] as const satisfies ReadonlyArray<{ name: string, measure: (context: BenchContext, kind: StoreKind) => Promise<Check> }>

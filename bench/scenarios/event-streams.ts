import { setTimeout as sleep } from 'node:timers/promises'
import { cpuTimeNs } from '../../tools/harness/cpu-time.js'
import { RssSampler, rssBytes } from '../../tools/harness/rss-sampler.js'
import type { StoreKind } from '../../tools/harness/scratch-store.js'
import type { ServerProcess } from '../../tools/harness/server-process.js'
import type { BenchContext } from '../_util/bench-context.js'
import { burstCreates, pacedCreates, petIds, quantile, type Created } from '../_util/create-load.js'
import { median } from '../_util/measure.js'
import { log } from '../_util/plan.js'
import { openReaders, SilentStream, StreamReader } from '../_util/stream-readers.js'
import { copyNewestEvent, createP50, feedIds, streamsEnded, waitForPets, warmUp, withStreamService } from '../_util/stream-service.js'
import { commitToReceiptMs } from '../_util/webhook-service.js'
import type { Check } from '../report.js'
import { describeLatencies, failed, ms } from './webhooks.js'

/** The targets of the event stream (issue 40): reported, never enforced. */
export const STREAM_TARGETS = {
  /** Commit (the create's 201) to the receipt of its message on a stream, p99, at {@link pacedRate} creates/s. */
  commitToReceiptP99Ms: 50,
  pacedRate: 25,
  /** The same on PostgreSQL for a stream on one instance and creates through another. */
  crossInstanceP99Ms: 100,
  /** Streams open on one instance, and the burst of creates each must receive whole, in order, once. */
  streams: 1_000,
  burst: 1_000,
  /** Growth of the instance's RSS (process tree) with the streams open, through the burst. */
  rssGrowthMb: 150,
  /** createPet's p50 at {@link pacedRate} creates/s with the streams open, × without, alternated in one run. */
  createP50WithStreams: 1.25,
  /** The readers beside a stream that never reads keep this p99 (commit → receipt) at {@link pacedRate} creates/s. */
  readersBesideSilent: 10,
  besideSilentP99Ms: 50
} as const

/**
 * The bounds set for the silent stream: the smallest backlog EVENT_STREAM_MAX_BACKLOG_KIB allows, and a heartbeat of
 * 5 s, so that the cut (backlog past the bound, and nothing taken for a whole heartbeat) comes 5 to 10 s after the
 * socket's kernel buffers are full: within the run, with the readers measured beside the silent stream before it.
 */
export const SILENT_ENV = { EVENT_STREAM_MAX_BACKLOG_KIB: '16', EVENT_STREAM_HEARTBEAT_SECONDS: '5' } as const

/** How long each part runs (the quick run's p99 is of few samples: 150 creates' is nearly the slowest). */
function durations (quick: boolean): { pacedSeconds: number, roundSeconds: number, silentSeconds: number } {
  return quick ? { pacedSeconds: 6, roundSeconds: 4, silentSeconds: 15 } : { pacedSeconds: 20, roundSeconds: 10, silentSeconds: 30 }
}

/**
 * The events the silent stream starts behind: about 5 MB of messages, more than the loopback socket holds (the
 * sender's buffer grows to tcp_wmem's largest, 4 MB by default, the receiver's holds about 130 KB), so that its
 * backlog in the service passes the bound within seconds. A stream at the head at 25 creates/s would take hours.
 */
const SILENT_BEHIND = 25_000

// after the load, how long messages still owed may take before they count as missing
const DRAIN_MS = 20_000
const MB = 1024 * 1024

/** Commit → receipt of the creates made through `through`, heard by `reader`. */
async function pacedToReader (context: BenchContext, through: string, reader: StreamReader, seconds: number): Promise<{ created: Created[], p99: number, text: string }> {
  const created = await pacedCreates(through, context.headers, STREAM_TARGETS.pacedRate, seconds)
  await waitForPets(reader, petIds(created), DRAIN_MS)
  return { created, ...describeLatencies(commitToReceiptMs(created, reader.receipts), DRAIN_MS) }
}

/** Target 1: one stream, creates at 25/s through its instance; on PostgreSQL, then through a second instance on the same schema. */
async function commitToReceipt (context: BenchContext, kind: StoreKind): Promise<Check[]> {
  const { pacedSeconds } = durations(context.plan.quick)
  const rate = STREAM_TARGETS.pacedRate
  return await withStreamService(context, kind, kind === 'postgres' ? 2 : 1, {}, async (services) => {
    const [service, other] = services
    if (service === undefined) throw new Error('no service')
    const reader = await StreamReader.open(service.baseUrl, context.headers, { pets: true })
    try {
      await warmUp(services, context.headers, [reader])
      const same = await pacedToReader(context, service.baseUrl, reader, pacedSeconds)
      log(`streams (${kind}): commit to receipt at ${rate}/s: ${same.text}`)
      const checks: Check[] = [{
        check: `streams (${kind}): commit (201) → receipt on a stream p99, ${rate} creates/s for ${pacedSeconds} s through the stream's instance`,
        measured: `${ms(same.p99)} (${same.text})${failed(same.created)}`,
        target: `≤ ${STREAM_TARGETS.commitToReceiptP99Ms} ms`,
        met: same.p99 <= STREAM_TARGETS.commitToReceiptP99Ms
      }]
      if (other !== undefined) {
        const across = await pacedToReader(context, other.baseUrl, reader, pacedSeconds)
        log(`streams (${kind}): commit on another instance to receipt at ${rate}/s: ${across.text}`)
        checks.push({
          check: `streams (${kind}): commit (201) on a second instance → receipt on a stream of the first, p99, ${rate} creates/s for ${pacedSeconds} s`,
          measured: `${ms(across.p99)} (${across.text})${failed(across.created)}`,
          target: `≤ ${STREAM_TARGETS.crossInstanceP99Ms} ms`,
          met: across.p99 <= STREAM_TARGETS.crossInstanceP99Ms
        })
      }
      return checks
    } finally {
      reader.close()
    }
  })
}

/** Runs `creates`, adding the service's CPU time (process tree) per create answered 201 during it, in ms, to `perCreate`. */
async function costOf (service: ServerProcess, perCreate: number[], creates: () => Promise<Created[]>): Promise<Created[]> {
  const before = cpuTimeNs(service.processTree())
  const created = await creates()
  const after = cpuTimeNs(service.processTree())
  const count = petIds(created).size
  if (before !== undefined && after !== undefined && count > 0) perCreate.push((after - before) / 1e6 / count)
  return created
}

/** What went wrong with one reader's messages against the feed's `expected` ids; undefined when it had each, in order, once. */
function violation (ids: readonly number[], after: number, expected: readonly number[]): string | undefined {
  const got = ids.filter((id) => id > after)
  const seen = new Set(got)
  if (seen.size !== got.length) return 'an id twice'
  if (got.some((id, i) => i > 0 && id <= (got[i - 1] as number))) return 'out of order'
  const missing = expected.filter((id) => !seen.has(id)).length
  if (missing > 0) return `${missing} missing`
  if (got.length !== expected.length) return `${got.length - expected.length} not in the feed`
  return undefined
}

/**
 * Every reader's messages after `after` (the burst's) against the JSON feed's `pet.created` ids after it: how many readers
 * had each event, in order, once. Nothing else creates meanwhile, so the feed's events after `after` are the burst's.
 */
async function checkBurst (context: BenchContext, baseUrl: string, readers: readonly StreamReader[], after: number, created: readonly Created[]): Promise<{ text: string, met: boolean | undefined }> {
  const burstEnded = performance.now()
  const pets = petIds(created).size
  const expected = await feedIds(baseUrl, context.headers, after, pets)
  const last = expected.at(-1)
  if (last === undefined) return { text: 'the feed holds no event of the burst', met: undefined }
  await Promise.all(readers.map(async (reader) => await reader.waitForId(last, DRAIN_MS)))
  const lastArrival = Math.max(...readers.map((reader) => reader.lastAt))
  const problems = readers.map((reader) => violation(reader.ids, after, expected)).filter((problem) => problem !== undefined)
  const kinds = [...new Set(problems)].map((problem) => `${problems.filter((p) => p === problem).length} × ${problem}`)
  const text = `${readers.length - problems.length} of ${readers.length} streams had all ${expected.length} events in order, once` +
    `${kinds.length > 0 ? ` (${kinds.join(', ')})` : ''}${expected.length === pets ? '' : ` (the feed holds ${expected.length} events for ${pets} pets created)`}; ` +
    `the last message arrived ${((lastArrival - burstEnded) / 1000).toFixed(1)} s after the burst's last 201`
  return { text, met: problems.length === 0 && expected.length === pets }
}

/**
 * Target 2: 1,000 streams on one instance (caps raised through EVENT_STREAM_MAX_PER_KEY and _PER_INSTANCE). Round by round,
 * creates at 25/s without streams, then with the 1,000 open; in the last round, with them open, a burst of 1,000 creates
 * that every stream must receive whole. The RSS is the instance's process tree's, from just before the streams first open.
 */
async function thousandStreams (context: BenchContext, kind: StoreKind): Promise<Check[]> {
  const { roundSeconds } = durations(context.plan.quick)
  const { streams, burst, pacedRate: rate } = STREAM_TARGETS
  const cap = String(2 * streams + 10)
  const env = { EVENT_STREAM_MAX_PER_KEY: cap, EVENT_STREAM_MAX_PER_INSTANCE: cap }
  return await withStreamService(context, kind, 1, env, async ([service]) => {
    if (service === undefined) throw new Error('no service')
    const probe = await StreamReader.open(service.baseUrl, context.headers, { pets: true })
    let sampler: RssSampler | undefined
    let baselineRss: number | undefined
    const p50s: Record<'without' | 'with', number[]> = { without: [], with: [] }
    const cpu: Record<'without' | 'with', number[]> = { without: [], with: [] }
    const ratios: number[] = []
    let delivery: { text: string, met: boolean | undefined } = { text: 'not measured', met: undefined }
    try {
      await warmUp([service], context.headers, [probe])
      await pacedCreates(service.baseUrl, context.headers, rate, context.plan.warmupSeconds)
      for (let round = 0; round < context.plan.rounds; round++) {
        const without = await costOf(service, cpu.without, async () => await pacedCreates(service.baseUrl, context.headers, rate, roundSeconds))
        await waitForPets(probe, petIds(without), DRAIN_MS)
        if (round === 0) {
          baselineRss = rssBytes(service.processTree())
          sampler = new RssSampler(() => service.processTree())
        }
        const opening = performance.now()
        const readers = await openReaders(service.baseUrl, context.headers, streams, { after: probe.lastId })
        const openSeconds = (performance.now() - opening) / 1000
        try {
          const withStreams = await costOf(service, cpu.with, async () => await pacedCreates(service.baseUrl, context.headers, rate, roundSeconds))
          await waitForPets(probe, petIds(withStreams), DRAIN_MS)
          const [p50Without, p50With] = [createP50(without), createP50(withStreams)]
          p50s.without.push(p50Without)
          p50s.with.push(p50With)
          if (p50Without > 0) ratios.push(p50With / p50Without)
          log(`streams (${kind}): createPet at ${rate}/s, round ${round + 1}/${context.plan.rounds}: p50 ${ms(p50Without)} without, ${ms(p50With)} with ${streams} streams (opened in ${openSeconds.toFixed(1)} s)${failed([...without, ...withStreams])}`)
          if (round === context.plan.rounds - 1) {
            const from = probe.lastId
            const created = await burstCreates(service.baseUrl, context.headers, burst)
            delivery = await checkBurst(context, service.baseUrl, readers, from, created)
            delivery.text += failed(created)
            log(`streams (${kind}): a burst of ${burst} creates to ${streams} streams: ${delivery.text}`)
          }
        } finally {
          for (const reader of readers) reader.close()
        }
        // the slots are given back as the service sees the connections close
        await sleep(1_000)
      }
    } finally {
      probe.close()
      sampler?.stop()
    }
    const peak = sampler?.maxBytes
    const growthMb = peak === undefined || baselineRss === undefined ? undefined : (peak - baselineRss) / MB
    const ratio = median(ratios)
    const rssText = growthMb === undefined ? '–' : `${growthMb.toFixed(0)} MB (${(baselineRss as number / MB).toFixed(0)} MB before the streams, ${(peak as number / MB).toFixed(0)} MB at most with them)`
    log(`streams (${kind}): RSS growth with ${streams} streams: ${rssText}`)
    return [{
      check: `streams (${kind}): ${streams} open streams on one instance, a burst of ${burst} creates: each stream receives every event, in order, once`,
      measured: delivery.text,
      target: 'every stream, every event, in order, once',
      met: delivery.met
    }, {
      check: `streams (${kind}): the instance's RSS growth (process tree) with ${streams} streams open, through the burst`,
      measured: rssText,
      target: `≤ ${STREAM_TARGETS.rssGrowthMb} MB`,
      met: growthMb === undefined ? undefined : growthMb <= STREAM_TARGETS.rssGrowthMb
    }, {
      check: `streams (${kind}): createPet p50 at ${rate} creates/s with ${streams} streams open, × without (median of ${context.plan.rounds} rounds' ratios)`,
      measured: `${ratio === undefined ? '–' : ratio.toFixed(2)}× (p50 ${ms(median(p50s.with) ?? NaN)} with, ${ms(median(p50s.without) ?? NaN)} without; ` +
        `the service's CPU per create, its events' messages included: ${ms(median(cpu.with) ?? NaN)} with, ${ms(median(cpu.without) ?? NaN)} without)`,
      target: `≤ ${STREAM_TARGETS.createP50WithStreams}×`,
      met: ratio === undefined ? undefined : ratio <= STREAM_TARGETS.createP50WithStreams
    }]
  })
}

const nanAsInfinity = (value: number): number => Number.isNaN(value) ? Infinity : value

// after the load, how long the silent stream may still take to be cut
const CUT_WAIT_MS = 15_000
// after the cut, how long its socket may take to show the end once it reads what waits
const END_WAIT_MS = 10_000
// the silent stream's catch-up, which fills its socket's buffers: its creates are reported apart, not judged
const CATCH_UP_MS = 3_000

/** p99 of `latencies` (NaN: never received, slower than any). */
const p99Of = (latencies: readonly number[]): number => quantile(latencies.map(nanAsInfinity), 0.99)

/**
 * Target 3: ten readers at the head of the feed, and beside them a stream that never reads, opened {@link SILENT_BEHIND}
 * events back (so that its catch-up fills its socket's buffers within seconds); creates at 25/s from the moment it opens.
 * The readers' p99 is judged on the creates sent after {@link CATCH_UP_MS} (the silent stream congested, then cut); the
 * catch-up's are reported apart. The cut is seen on the service's `petstore_event_streams_ended_total{reason="backlog"}`,
 * then on the socket: once it reads, it finds the end the service gave it.
 */
async function silentBesideReaders (context: BenchContext, kind: StoreKind): Promise<Check[]> {
  const { silentSeconds } = durations(context.plan.quick)
  const behind = SILENT_BEHIND
  const rate = STREAM_TARGETS.pacedRate
  const count = STREAM_TARGETS.readersBesideSilent
  return await withStreamService(context, kind, 1, SILENT_ENV, async ([service], storeUrl) => {
    if (service === undefined) throw new Error('no service')
    await burstCreates(service.baseUrl, context.headers, 1, 1)
    await copyNewestEvent(kind, storeUrl, behind)
    const probe = await StreamReader.open(service.baseUrl, context.headers, { pets: true, after: undefined })
    await warmUp([service], context.headers, [probe])
    const readers = await Promise.all(Array.from({ length: count }, async () => await StreamReader.open(service.baseUrl, context.headers, { pets: true, after: probe.lastId })))
    probe.close()
    const silent = new SilentStream(service.baseUrl, context.headers, undefined)
    const opened = performance.now()
    try {
      let cutAt: number | undefined
      const watching = (async () => {
        while (cutAt === undefined && performance.now() - opened < silentSeconds * 1000 + CUT_WAIT_MS) {
          if ((await streamsEnded(service, 'backlog') ?? 0) > 0) cutAt = performance.now()
          else await sleep(100)
        }
      })()
      const created = await pacedCreates(service.baseUrl, context.headers, rate, silentSeconds)
      await Promise.all(readers.map(async (reader) => await waitForPets(reader, petIds(created), DRAIN_MS)))
      await watching
      const cut = cutAt ?? Infinity
      const latenciesOf = (from: number, to: number): number[] => {
        const some = created.filter((c) => c.sentAt >= from && c.sentAt < to)
        return readers.flatMap((reader) => commitToReceiptMs(some, reader.receipts))
      }
      const judged = latenciesOf(opened + CATCH_UP_MS, Infinity)
      const { p99, text: judgedText } = describeLatencies(judged, DRAIN_MS)
      const text = `${judgedText} (${judged.length / count} creates × ${count} streams); apart: p99 ${ms(p99Of(latenciesOf(opened, opened + CATCH_UP_MS)))} during the silent ` +
        `stream's first ${CATCH_UP_MS / 1000} s (its catch-up), and after ${CATCH_UP_MS / 1000} s ${ms(p99Of(latenciesOf(opened + CATCH_UP_MS, cut)))} ` +
        `while it was open, ${ms(p99Of(latenciesOf(Math.max(cut, opened + CATCH_UP_MS), Infinity)))} after its cut`
      let ended = false
      if (cutAt !== undefined) {
        silent.drain()
        ended = await Promise.race([silent.closed.then(() => true), sleep(END_WAIT_MS).then(() => false)])
      }
      const cutText = cutAt === undefined
        ? `not cut within ${((silentSeconds * 1000 + CUT_WAIT_MS) / 1000).toFixed(0)} s`
        : `cut ${((cutAt - opened) / 1000).toFixed(1)} s after it opened; its socket then ${ended ? `ended (${(silent.bytesRead / MB).toFixed(1)} MB had waited in its buffers)` : `did NOT end within ${END_WAIT_MS / 1000} s of reading`}`
      log(`streams (${kind}): ${count} readers beside a silent stream: ${text}; the silent stream was ${cutText}`)
      const settings = `EVENT_STREAM_MAX_BACKLOG_KIB=${SILENT_ENV.EVENT_STREAM_MAX_BACKLOG_KIB}, EVENT_STREAM_HEARTBEAT_SECONDS=${SILENT_ENV.EVENT_STREAM_HEARTBEAT_SECONDS}`
      return [{
        check: `streams (${kind}): commit → receipt p99 of ${count} streams beside one that never reads, ${rate} creates/s, the ${silentSeconds - CATCH_UP_MS / 1000} s after its catch-up (${settings})`,
        measured: `${ms(p99)} (${text})${failed(created)}`,
        target: `≤ ${STREAM_TARGETS.besideSilentP99Ms} ms`,
        met: p99 <= STREAM_TARGETS.besideSilentP99Ms
      }, {
        check: `streams (${kind}): a stream that never reads, opened ${behind.toLocaleString('en-US')} events behind, is cut by the service (${settings})`,
        measured: cutText,
        target: `cut, its socket closed by the service, within the scenario (${silentSeconds} s of load + ${CUT_WAIT_MS / 1000} s)`,
        met: cutAt !== undefined && ended
      }]
    } finally {
      silent.close()
      for (const reader of readers) reader.close()
    }
  })
}

/** The stream scenarios, in this order on `kind`; each one's failure is the harness's, reported by `attempt`. */
export const EVENT_STREAM_SCENARIOS = [
  { name: 'commit → receipt', measure: commitToReceipt },
  { name: '1,000 streams', measure: thousandStreams },
  { name: 'beside a silent stream', measure: silentBesideReaders }
] as const satisfies ReadonlyArray<{ name: string, measure: (context: BenchContext, kind: StoreKind) => Promise<Check[]> }>

import type { FastifyBaseLogger } from 'fastify'
import { setImmediate as nextTurn } from 'node:timers/promises'
import { BackgroundLoop } from '../../../infra/background/background-loop.js'
import type { BackgroundWork } from '../../../infra/background/background-work.js'
import type { Database } from '../../../infra/database/database.js'
import { watchRecordedEvents } from '../../../infra/database/watch-recorded-events.js'
import type { Metrics } from '../../../infra/metrics/metrics.js'
import type { StreamMetrics } from './stream-metrics.js'
import type { SerializeEvent } from '../event-serializer.js'
import type { EventType } from '../event-types.js'
import { retentionPassed } from '../event-expiry.js'
import type { EventStore } from '../store/event-store.js'
import type { EventStream, SerializedEvent } from './event-stream.js'
import { eventMessage } from './sse-format.js'

/** Events read at once, by the tail and by a stream catching up. */
export const STREAM_PAGE_SIZE = 500
// the newest events the tail keeps, written: a stream that comes within them joins without a read of its own
const RECENT_EVENTS = 1000
// the fallback look for new events while streams are open: commits wake the tail at once
const TAIL_POLL_MS = 5_000
// the streams written to in one turn of the event loop: between groups, requests that arrived are read (with a
// thousand streams one fan-out is ~10 ms of writes, which a create would otherwise wait out whole)
const FAN_OUT_GROUP = 100

/** A page read for one stream: its events written, and how far it accounts for. */
export interface StreamPage {
  events: SerializedEvent[]
  /** The highest id retention has deleted (of the types read): a stream behind it has missed events. */
  purgedThrough: number
  /** Every event up to this id is in `events` or not of the types read. */
  through: number
}

export interface EventTailOptions {
  store: EventStore
  /** How each event is written once for every stream: the feed's serializer (`app.eventSerializer.event`). */
  serialize: SerializeEvent
  database: Database
  /** The background loop's metrics. */
  metrics: Metrics
  /** Counts a stream that falls behind. */
  streamMetrics: Pick<StreamMetrics, 'behind'>
  log: FastifyBaseLogger
}

/**
 * The instance's one tail of the feed: woken by every commit that records events (on this instance and every
 * other, `watchRecordedEvents`), it reads the new events once, writes each once, and hands them to every
 * stream that is caught up (live), each taking those of its types. A stream that starts behind catches up with
 * its own reads, paced by its consumer, then joins: from the tail's recent events when it has come within them,
 * so that no event falls between its reads and the tail's. Invariant, between fan-outs: every live stream has
 * accounted for every event up to the tail's position, which is never beyond a committed id (during one, the
 * streams of groups not yet written have not; a stream that joins meanwhile takes the recent events, which hold
 * them). With no live stream the tail reads nothing.
 */
export class EventTail implements BackgroundWork {
  readonly #options: EventTailOptions
  readonly #loop: BackgroundLoop
  readonly #live = new Set<EventStream>()
  // every stream open, live or catching up
  readonly #streams = new Set<EventStream>()
  readonly #catchingUp = new Set<Promise<void>>()
  // the newest events read, contiguous: every event in (#recentFrom, #position] is here
  #recent: SerializedEvent[] = []
  #recentFrom = 0
  #position: number | undefined
  // the highest id known to be committed (read by the tail or a stream, or the store's newest): never beyond the real one
  #committed = 0
  #unwatch: (() => void) | undefined
  #stopped = false

  constructor (options: EventTailOptions) {
    this.#options = options
    this.#loop = new BackgroundLoop({
      name: 'event_stream_tail',
      intervalMs: TAIL_POLL_MS,
      pass: async () => await this.#readNew(),
      onError: (error) => { options.log.warn({ err: error }, 'could not read new events for the open streams; trying again at the next commit') },
      metrics: options.metrics
    })
  }

  start (): void {
    this.#loop.start()
  }

  /** Reads nothing more; awaits the reads in flight (the tail's and the streams' catching up). */
  async stop (): Promise<void> {
    this.#stopped = true
    this.#unwatch?.()
    await this.#loop.stop()
    await Promise.all(this.#catchingUp)
  }

  /** Ends every stream cleanly (a stream catching up included): at close, before HTTP drains. */
  finishAll (): void {
    for (const stream of this.#streams) stream.finish('shutdown')
  }

  /** Reads, for one stream, the page after `afterId` of `types`; `through` says how far it accounts for. */
  async readPage (afterId: number, types: ReadonlySet<EventType> | undefined): Promise<StreamPage> {
    // what was committed before this read began: a page that is not full accounts for it too. The tail knows it
    // while streams follow it; an idle one has read nothing, so the store says
    const before = this.#live.size > 0 && this.#position !== undefined ? this.#position : await this.#options.store.newestEventId()
    const page = await this.#options.store.listEvents({ afterId, limit: STREAM_PAGE_SIZE, types: types === undefined ? undefined : [...types] })
    const events = page.events.map((event) => this.#written(event.id, event.type, event))
    const last = events.at(-1)?.id ?? 0
    const through = events.length === STREAM_PAGE_SIZE ? last : Math.max(last, before)
    this.#committed = Math.max(this.#committed, through)
    return { events, purgedThrough: page.purgedThrough, through }
  }

  /** Has `stream`, which has sent its first page, catch up with its own reads, then join the live ones. */
  follow (stream: EventStream): void {
    this.#unwatch ??= watchRecordedEvents(this.#options.database, () => { this.#loop.wake() })
    this.#streams.add(stream)
    stream.once('close', () => {
      this.#live.delete(stream)
      this.#streams.delete(stream)
    })
    this.#startCatchUp(stream)
  }

  /** Starts `stream` catching up; `readFirst`: with a page of its own before it may join the live ones again. */
  #startCatchUp (stream: EventStream, readFirst = false): void {
    const catchingUp = this.#catchUp(stream, readFirst).catch((error: unknown) => {
      this.#options.log.warn({ err: error }, 'an event stream could not catch up; it ends, and its consumer resumes with Last-Event-ID')
      stream.finish('failed')
    }).finally(() => { this.#catchingUp.delete(catchingUp) })
    this.#catchingUp.add(catchingUp)
  }

  async #catchUp (stream: EventStream, readFirst: boolean): Promise<void> {
    let mayJoin = !readFirst
    while (stream.open && !this.#stopped) {
      await stream.whenConsumerReady()
      if (!stream.open || this.#stopped) return
      if (mayJoin && this.#join(stream)) return
      mayJoin = true
      const page = await this.readPage(stream.position, stream.types)
      // retention passed the stream while it caught up (the feed's rule, on the page's own snapshot): the events
      // after its position are gone, so it must not go on past them; it ends with the 410 as its last message
      if (retentionPassed(stream.position, page.purgedThrough)) return await stream.expire(page.purgedThrough)
      stream.sendEvents(page.events, page.through)
      // a turn of the event loop between pages: SQLite reads without waiting on I/O, and while the kernel still takes
      // what is written nothing else would wait either, so a far-behind stream would hold the loop page after page
      await nextTurn()
    }
  }

  /** Joins `stream` to the live ones when nothing lies between its position and the tail's; false when it must read more first. */
  #join (stream: EventStream): boolean {
    if (this.#live.size === 0) {
      // nobody follows the tail, so it read nothing: it starts where this stream is, or at the newest committed
      // event when the stream's position lies beyond (a client may ask for after=<an id not yet drawn>)
      this.#position = Math.min(stream.position, this.#committed)
      this.#recent = []
      this.#recentFrom = this.#position
    } else if (stream.position < (this.#position as number)) {
      if (stream.position < this.#recentFrom) return false
      stream.sendEvents(this.#recent, this.#position as number)
    }
    this.#live.add(stream)
    // a commit heard while nobody followed was not read: look now
    this.#loop.wake()
    return true
  }

  /** One pass of the tail: the next page after its position, to every live stream. True when a full page says more is waiting. */
  async #readNew (): Promise<boolean> {
    const from = this.#position
    if (this.#live.size === 0 || from === undefined || this.#stopped) return false
    const page = await this.#options.store.listEvents({ afterId: from, limit: STREAM_PAGE_SIZE })
    // a stream joined an idle tail meanwhile and moved it: read again from there
    if (this.#position !== from) return true
    if (retentionPassed(from, page.purgedThrough)) {
      // retention deleted events after the tail's position (a stream that was behind joined an idle tail there): what
      // follows the gap goes to nobody. Each live stream reads a page of its own first, which applies the rule to its
      // types: a stream that missed events ends with the 410 as its last message, one that did not joins again
      for (const stream of this.#live) {
        this.#live.delete(stream)
        this.#startCatchUp(stream, true)
      }
      return false
    }
    const events = page.events.map((event) => this.#written(event.id, event.type, event))
    const last = events.at(-1)
    if (last === undefined) return false
    this.#position = last.id
    this.#committed = Math.max(this.#committed, last.id)
    this.#recent.push(...events)
    if (this.#recent.length > RECENT_EVENTS) {
      const dropped = this.#recent.splice(0, this.#recent.length - RECENT_EVENTS)
      this.#recentFrom = (dropped.at(-1) as SerializedEvent).id
    }
    await this.#fanOut(events, last.id)
    return events.length === STREAM_PAGE_SIZE
  }

  /**
   * Hands `events` to every live stream, {@link FAN_OUT_GROUP} streams a turn: one buffer for all the streams of
   * every type, one per set of types otherwise. A stream that joins meanwhile has them from the recent events;
   * its position keeps any from coming twice. Commits meanwhile wake one pass after this one: they go out together.
   */
  async #fanOut (events: readonly SerializedEvent[], through: number): Promise<void> {
    const first = (events[0] as SerializedEvent).id
    const everyType = Buffer.concat(events.map((event) => event.message))
    const byTypes = new Map<string, { messages: Buffer, count: number }>()
    const streams = [...this.#live]
    for (let start = 0; start < streams.length; start += FAN_OUT_GROUP) {
      if (start > 0) await nextTurn()
      for (const stream of streams.slice(start, start + FAN_OUT_GROUP)) this.#handOver(stream, events, first, through, everyType, byTypes)
    }
  }

  /** One live stream's share of a fan-out (a stream that left the live ones meanwhile gets nothing). */
  #handOver (stream: EventStream, events: readonly SerializedEvent[], first: number, through: number, everyType: Buffer, byTypes: Map<string, { messages: Buffer, count: number }>): void {
    if (!this.#live.has(stream)) return
    if (stream.congested) {
      // its consumer is behind: it leaves the live streams and catches up at its own pace
      this.#options.streamMetrics.behind.inc()
      this.#live.delete(stream)
      this.#startCatchUp(stream)
    } else if (stream.position >= first) {
      stream.sendEvents(events, through)
    } else if (stream.types === undefined) {
      stream.sendMessages(everyType, events.length, through)
    } else {
      const key = [...stream.types].sort().join(',')
      let chosen = byTypes.get(key)
      if (chosen === undefined) {
        const ofTypes = events.filter((event) => stream.carries(event.type))
        chosen = { messages: Buffer.concat(ofTypes.map((event) => event.message)), count: ofTypes.length }
        byTypes.set(key, chosen)
      }
      if (chosen.count > 0) stream.sendMessages(chosen.messages, chosen.count, through)
      else stream.position = through
    }
  }

  #written (id: number, type: EventType, event: Parameters<SerializeEvent>[0]): SerializedEvent {
    return { id, type, message: eventMessage(id, type, this.#options.serialize(event)) }
  }
}

import type { FastifyReply, FastifyRequest } from 'fastify'
import type { ApiError } from '../../../infra/errors/catalogue.js'
import { errorBody } from '../../../infra/http/error-handler.js'
import type { EventStreamSettings } from '../../../infra/config/config.js'
import { markStreamedAnswer } from '../../../infra/metrics/http-metrics.js'
import { retentionPassed } from '../event-expiry.js'
import type { EventType } from '../event-types.js'
import { EventStream, type StreamEnd } from './event-stream.js'
import type { StreamMetrics } from './stream-metrics.js'
import type { EventTail, StreamPage } from './event-tail.js'
import { errorMessage, EVENT_STREAM_MEDIA_TYPE } from './sse-format.js'
import { StreamSlots } from './stream-slots.js'

/** Calls `settle` once, at `response`'s next `drain` or its `close`. */
function settleOnDrainOrClose (response: FastifyReply['raw'], settle: () => void): void {
  const done = (): void => {
    response.off('drain', done)
    response.off('close', done)
    settle()
  }
  response.once('drain', done)
  response.once('close', done)
}

/** Where a new stream starts, and what it carries. */
export interface StreamRequest {
  /** The id it resumes after (`Last-Event-ID`, else `after`); undefined: from the oldest retained event. */
  after: number | undefined
  types: readonly EventType[] | undefined
  /** The 410 of a position retention has passed, as the JSON feed answers it. */
  expired: (after: number, purgedThrough: number) => Promise<ApiError>
}

/**
 * The streams of this instance: their slots (caps per key and per instance), the tail that feeds them, and
 * their end at close. A stream is answered in three steps: a slot (or the 429/503), its first page (or the 410,
 * as JSON, before anything of the stream is sent), then the stream, which catches up and joins the tail.
 */
export class EventStreams {
  readonly #tail: EventTail
  readonly #slots: StreamSlots
  readonly #settings: EventStreamSettings
  readonly #metrics: StreamMetrics
  #closing = false

  constructor (tail: EventTail, settings: EventStreamSettings, metrics: StreamMetrics) {
    this.#tail = tail
    this.#settings = settings
    this.#metrics = metrics
    this.#slots = new StreamSlots(settings, (open) => { metrics.open.set(open) }, (cap) => { metrics.refused.inc({ cap }) })
  }

  /** Streams open now. */
  get open (): number {
    return this.#slots.open
  }

  /** Answers `request` with a stream of the feed (or throws the 429, 503 or 410 before any of it is sent). */
  async answer (request: FastifyRequest, reply: FastifyReply, { after, types, expired }: StreamRequest): Promise<FastifyReply> {
    const slot = this.#slots.take(request.apiKey?.scope ?? '')
    let page: StreamPage
    const typeSet = types === undefined ? undefined : new Set(types)
    try {
      page = await this.#tail.readPage(after ?? 0, typeSet)
      if (after !== undefined && retentionPassed(after, page.purgedThrough)) throw await expired(after, page.purgedThrough)
    } catch (error) {
      slot.release()
      throw error
    }
    const stream = new EventStream({
      types: typeSet,
      // from the start, after what retention deleted (as the JSON feed's first page)
      position: after ?? page.purgedThrough,
      maxBacklogBytes: this.#settings.maxBacklogBytes,
      heartbeatMs: this.#settings.heartbeatMs,
      unsentBeyond: () => reply.raw.writableLength,
      responseDrained: async () => { await new Promise<void>((resolve) => { settleOnDrainOrClose(reply.raw, resolve) }) },
      // the Error body the 410 would carry, written as the JSON answer writes it (the schema's order: code, message, status)
      expiredMessage: async (position, purgedThrough) => errorMessage(JSON.stringify(errorBody(await expired(position, purgedThrough)))),
      dropConnection: () => { reply.raw.destroy() },
      onMessages: (count) => { this.#metrics.messages.inc(count) },
      onEnd: (ended, reason: StreamEnd | undefined) => {
        slot.release()
        if (reason !== undefined) this.#metrics.ended.inc({ reason })
        if (reason === 'expired') request.log.info({ position: ended.position }, 'event stream ended: retention passed its position; its consumer must resynchronize')
        if (reason === 'backlog') request.log.warn({ maxBacklogBytes: this.#settings.maxBacklogBytes }, 'event stream cut: its consumer stopped reading')
      }
    })
    reply.raw.on('drain', () => { stream.consumerTook() })
    stream.sendEvents(page.events, page.through)
    markStreamedAnswer(request)
    // a stream asked for while the instance closes ends at once: its consumer resumes elsewhere
    if (this.#closing) stream.finish('shutdown')
    else this.#tail.follow(stream)
    return reply.type(EVENT_STREAM_MEDIA_TYPE).send(stream)
  }

  /** Ends every stream cleanly, and every one begun from now on at once: the instance is closing. */
  finishAll (): void {
    this.#closing = true
    this.#tail.finishAll()
  }
}

import { Readable } from 'node:stream'
import type { EventType } from '../event-types.js'
import { HEARTBEAT, STREAM_OPENING } from './sse-format.js'

/** An event written once for every stream: its id, its type, and its whole message (sse-format.ts). */
export interface SerializedEvent {
  readonly id: number
  readonly type: EventType
  readonly message: Buffer
}

/** Why the service ended a stream (a consumer that hangs up ends it too, without a reason). */
export type StreamEnd = 'backlog' | 'shutdown' | 'failed' | 'expired'

/** Every {@link StreamEnd}, for the metric's labels. */
export const STREAM_ENDS: readonly StreamEnd[] = ['backlog', 'shutdown', 'failed', 'expired']

export interface EventStreamOptions {
  /** Only events of these types; undefined: every type. */
  types: ReadonlySet<EventType> | undefined
  /** The id the stream starts after: every event up to it is accounted for. */
  position: number
  maxBacklogBytes: number
  heartbeatMs: number
  /** Bytes written on past this stream and not yet taken by the consumer's connection (the response's own buffer). */
  unsentBeyond: () => number
  /** Settles once the response has handed what it holds to the connection (its `drain`), or has closed. */
  responseDrained: () => Promise<void>
  /** The final message of a stream whose `position` retention has passed (`purgedThrough`): the feed's 410 as an `error` message. */
  expiredMessage: (position: number, purgedThrough: number) => Promise<Buffer>
  /** Drops the consumer's connection at once (a stream that must not flush what it holds). */
  dropConnection: () => void
  /** Told of each write of event messages, with their number. */
  onMessages: (count: number) => void
  /** Told once, when the stream has ended for any reason (`reason` undefined: the consumer went away). */
  onEnd: (stream: EventStream, reason: StreamEnd | undefined) => void
}

// what a stream catching up holds before it waits for its consumer: a page or two
const CATCH_UP_HIGH_WATER_BYTES = 64 * 1024
// the most handed to the response at once: the response's drain, by which a consumer is seen to take something,
// comes after each piece, so a consumer that reads slowly is seen to read while a page of megabytes goes out
const WRITE_PIECE_BYTES = 64 * 1024

/**
 * One consumer's stream, as the response's body (Fastify pipes it to the connection). Its `position` is the
 * highest id it has accounted for (sent, or skipped by its type filter): whatever comes at or below it is
 * dropped, so a message is never sent twice. Writing never waits, so the others are never held up: a stream
 * whose unsent backlog has passed the bound ({@link congested}) gets nothing more live and catches up at its
 * consumer's pace ({@link whenConsumerReady}); one whose consumer took nothing for a whole heartbeat interval
 * while past the bound is cut. A heartbeat comment goes out every `heartbeatMs`.
 */
export class EventStream extends Readable {
  position: number
  readonly types: ReadonlySet<EventType> | undefined
  readonly #options: EventStreamOptions
  readonly #heartbeat: NodeJS.Timeout
  #ready: (() => void) | undefined
  #over = false
  // the consumer took something since the last heartbeat (the response drained)
  #took = true

  constructor (options: EventStreamOptions) {
    super({ highWaterMark: CATCH_UP_HIGH_WATER_BYTES })
    this.#options = options
    this.position = options.position
    this.types = options.types
    this.push(STREAM_OPENING)
    this.#heartbeat = setInterval(() => { this.#beat() }, options.heartbeatMs).unref()
  }

  /** False once it has ended, was cut, or its consumer went away. */
  get open (): boolean {
    return !this.#over
  }

  /** Bytes written to this stream that its consumer has not taken yet. */
  get backlog (): number {
    return this.readableLength + this.#options.unsentBeyond()
  }

  /** Its backlog has passed the bound: it gets nothing more live, and catches up at its consumer's pace instead. */
  get congested (): boolean {
    return this.backlog > this.#options.maxBacklogBytes
  }

  /** Whether an event of `type` is one this stream carries. */
  carries (type: EventType): boolean {
    return this.types === undefined || this.types.has(type)
  }

  /** Sends `events` (in id order) that are above its position and of its types, then accounts for everything through `through`. */
  sendEvents (events: readonly SerializedEvent[], through: number): void {
    const chosen = events.filter((event) => event.id > this.position && this.carries(event.type))
    if (chosen.length > 0) this.sendMessages(chosen.length === 1 ? (chosen[0] as SerializedEvent).message : Buffer.concat(chosen.map((event) => event.message)), chosen.length, through)
    else this.position = Math.max(this.position, through)
  }

  /** Sends `count` messages already chosen for this stream, written together in `messages`, and accounts for everything through `through`. */
  sendMessages (messages: Buffer, count: number, through: number): void {
    if (through <= this.position) return
    this.position = through
    this.#write(messages, count)
  }

  /** Resolves once the consumer has taken what this stream holds (or the stream has ended): when a stream catching up may read its next page. */
  async whenConsumerReady (): Promise<void> {
    while (!this.#over && this.backlog >= CATCH_UP_HIGH_WATER_BYTES) {
      // what this stream holds waits for the response to ask for more; what the response holds, for its drain
      if (this.readableLength > 0) await new Promise<void>((resolve) => { this.#ready = resolve })
      else await this.#options.responseDrained()
    }
  }

  /** Ends the stream cleanly: what it holds is sent, then the response ends; the consumer resumes with Last-Event-ID. */
  finish (reason: StreamEnd): void {
    if (this.#over) return
    this.#close(reason)
    this.push(null)
  }

  /**
   * Ends the stream because retention deleted events after its position (through `purgedThrough`): one last
   * message, the `error` whose data is the 410 `events_expired` the JSON feed would answer, then the clean end.
   * Its consumer must resynchronize; resuming with Last-Event-ID is that 410.
   */
  async expire (purgedThrough: number): Promise<void> {
    const message = await this.#options.expiredMessage(this.position, purgedThrough)
    if (this.#over) return
    this.#write(message, 0)
    this.finish('expired')
  }

  /** Drops the consumer's connection at once, unflushed. */
  cut (reason: StreamEnd): void {
    if (this.#over) return
    this.#close(reason)
    this.#options.dropConnection()
    this.destroy()
  }

  /** The consumer took what the connection held (the response drained): it reads, however slowly. */
  consumerTook (): void {
    this.#took = true
  }

  override _read (): void {
    const ready = this.#ready
    this.#ready = undefined
    ready?.()
  }

  override _destroy (error: Error | null, callback: (error?: Error | null) => void): void {
    // the consumer went away (Fastify destroys the body when the connection closes)
    this.#close(undefined)
    callback(error)
  }

  #write (chunk: Buffer, messages: number): void {
    if (this.#over) return
    // views of the one buffer that every stream shares, never copies
    for (let start = 0; start < chunk.length; start += WRITE_PIECE_BYTES) this.push(chunk.subarray(start, start + WRITE_PIECE_BYTES))
    if (messages > 0) this.#options.onMessages(messages)
  }

  /** A heartbeat; or the cut of a consumer that took nothing for a whole interval while its backlog stayed past the bound. */
  #beat (): void {
    if (this.congested && !this.#took) {
      this.cut('backlog')
      return
    }
    this.#took = false
    this.#write(HEARTBEAT, 0)
  }

  #close (reason: StreamEnd | undefined): void {
    if (this.#over) return
    this.#over = true
    clearInterval(this.#heartbeat)
    this.#ready?.()
    this.#ready = undefined
    this.#options.onEnd(this, reason)
  }
}

import { EventSourceParserStream, type EventSourceMessage } from 'eventsource-parser/stream'
import { endpoint } from './answers.js'
import { PetStoreError } from './errors.js'
import { parseJson } from './exact-json.js'
import type { ClientSettings } from './options.js'
import { retryDelayMs, sleep } from './retry.js'
import { describeNetworkError, failureOf } from './transport.js'
import type { EventPage, ListEventsQuery, PetStoreEvent } from './types.js'

/** After the service refused a stream (an older service, a cap on streams): how long to poll before asking for one again. */
export const STREAM_AGAIN_AFTER_REFUSAL_MS = 60_000

/** How `events.follow` reads the feed: a page at a time (what the stream falls back to). */
export type ReadPage = (query: ListEventsQuery, signal: AbortSignal) => Promise<EventPage>

/** How to follow: the signal that ends it, the pause after an empty page, and whether to stream at all. */
export interface FollowSettings {
  signal: AbortSignal
  pollIntervalMs: number
  stream: boolean
}

/** What one attempt at streaming came to. */
type StreamOutcome =
  /** The stream ran and then ended or broke; `progressed` when it delivered anything (a message or a heartbeat). */
  | { kind: 'ended', progressed: boolean, error?: PetStoreError }
  /** The service answered something other than a stream it may give later: poll meanwhile. */
  | { kind: 'refused', retryAfterMs: number | undefined }

/**
 * Every event after `query.after`, each once and in id order, until `signal` aborts. It follows the
 * Server-Sent Events stream of `GET /events` (`Accept: text/event-stream`) and, when the stream drops,
 * connects again with `Last-Event-ID` set to the last event it yielded. Where streaming is refused (an
 * older service answering a JSON page, 406, or a cap on open streams: 429 or 503) it polls pages every
 * `pollIntervalMs` instead, and asks for a stream again after {@link STREAM_AGAIN_AFTER_REFUSAL_MS} (or the
 * answer's `Retry-After`, if longer). Connecting is retried like every call; an error that outlasts the
 * retries, or a 410 `events_expired` (a page's or a reconnection's, or a stream's last `error` message when
 * retention passes it while it catches up), is thrown.
 */
export async function * followEvents (settings: ClientSettings, readPage: ReadPage, query: ListEventsQuery, { signal, pollIntervalMs, stream }: FollowSettings): AsyncGenerator<PetStoreEvent, void, undefined> {
  const position = { after: query.after, reconnectMs: undefined as number | undefined }
  let streamAgainAt = stream ? 0 : Infinity
  let failures = 0
  while (!signal.aborted) {
    if (Date.now() >= streamAgainAt) {
      const outcome = yield * streamEvents(settings, query, position, signal)
      if (signal.aborted) return
      if (outcome.kind === 'ended') {
        failures = outcome.progressed ? 0 : failures + 1
        if (failures > settings.retry.retries) throw outcome.error ?? streamError(settings, 'the stream ended before it delivered anything', failures)
        if (await pause(retryDelayMs(settings.retry, Math.max(1, failures), position.reconnectMs), signal)) return
        continue
      }
      streamAgainAt = Date.now() + Math.max(outcome.retryAfterMs ?? 0, STREAM_AGAIN_AFTER_REFUSAL_MS)
    }
    // polling, while the stream is refused: one page per round, a pause after an empty one
    let page: EventPage
    try {
      page = await readPage({ ...query, after: position.after }, signal)
    } catch (error) {
      if (signal.aborted) return
      throw error
    }
    for (const event of page.events) {
      yield event
      if (signal.aborted) return
    }
    position.after = page.nextAfter
    if (page.events.length === 0 && await pause(pollIntervalMs, signal)) return
  }
}

/** Sleeps `ms`; true when `signal` aborted meanwhile (the caller stopping, not a failure). */
async function pause (ms: number, signal: AbortSignal): Promise<boolean> {
  try {
    await sleep(ms, signal)
    return false
  } catch {
    return true
  }
}

/**
 * One connection: yields the stream's events while it lasts, moving `position.after` past each. A silence
 * (no message and no heartbeat) of `timeoutMs` counts as a dropped connection.
 */
async function * streamEvents (settings: ClientSettings, query: ListEventsQuery, position: { after: number | undefined, reconnectMs: number | undefined }, signal: AbortSignal): AsyncGenerator<PetStoreEvent, StreamOutcome, undefined> {
  const url = endpoint(settings, '/events')
  for (const type of typeof query.type === 'string' ? [query.type] : query.type ?? []) url.searchParams.append('type', type)
  const requestId = globalThis.crypto.randomUUID()
  const headers: Record<string, string> = { accept: 'text/event-stream', authorization: `Bearer ${settings.apiKey}`, 'x-request-id': requestId }
  // the position goes in Last-Event-ID, which the service reads before `after`
  if (position.after !== undefined) headers['last-event-id'] = String(position.after)
  const connection = new AbortController()
  const stop = (): void => { connection.abort() }
  signal.addEventListener('abort', stop, { once: true })
  let silence = setTimeout(stop, settings.timeoutMs)
  const heard = (): void => {
    clearTimeout(silence)
    silence = setTimeout(stop, settings.timeoutMs)
  }
  let progressed = false
  try {
    // called unbound, as transport.ts calls it: a browser's fetch refuses any `this` but the window
    const { fetch } = settings
    const response = await fetch(url, { method: 'GET', headers, redirect: 'manual', signal: connection.signal })
    if (!response.ok || !(response.headers.get('content-type') ?? '').startsWith('text/event-stream')) {
      const text = await response.text()
      if (response.ok || response.status === 406 || response.status === 429 || response.status === 503) {
        const retryAfter = response.ok ? undefined : failureOf('listEvents', response, text, requestId).retryAfterMs
        return { kind: 'refused', retryAfterMs: retryAfter }
      }
      const { retryable, ...failure } = failureOf('listEvents', response, text, requestId)
      const error = new PetStoreError({ ...failure, operation: 'listEvents', attempts: 1 })
      if (!retryable) throw error
      return { kind: 'ended', progressed, error }
    }
    heard()
    // an open stream is progress: a service that ends it at once (shutting down) is asked again after `retry:`
    progressed = true
    const messages = response.body
      ?.pipeThrough(new TextDecoderStream())
      .pipeThrough(new EventSourceParserStream({
        onComment: heard,
        onRetry: (ms) => { position.reconnectMs = ms }
      }))
    if (messages === undefined) return { kind: 'ended', progressed }
    // a reader, not `for await`: Safari cannot iterate a ReadableStream
    const reader = messages.getReader()
    for (let next = await reader.read(); !next.done; next = await reader.read()) {
      const message = next.value
      heard()
      // the service's last message when it ends the stream for a reason to act on (retention passed the position):
      // the Error the same request answers as JSON, thrown as that answer's error is
      if (message.event === STREAM_ERROR_EVENT) throw streamEndError(message, response)
      const event = eventOf(message, response)
      if (event === undefined) continue
      position.after = event.id
      yield event
      if (signal.aborted) break
    }
    return { kind: 'ended', progressed }
  } catch (error) {
    if (signal.aborted || error instanceof PetStoreError) {
      if (signal.aborted) return { kind: 'ended', progressed }
      throw error
    }
    return { kind: 'ended', progressed, error: streamError(settings, describeNetworkError(error), 1, error, url) }
  } finally {
    clearTimeout(silence)
    signal.removeEventListener('abort', stop)
    connection.abort()
  }
}

/** The `event:` of the stream's last message when the service ends it with an Error (`events_expired`). */
const STREAM_ERROR_EVENT = 'error'

/** The error of a stream's `error` message: its data is an Error body, as the 410 of a page would carry it. */
function streamEndError (message: EventSourceMessage, response: Response): PetStoreError {
  let body: unknown
  try {
    body = parseJson(message.data)
  } catch {
    body = undefined
  }
  const { code, message: text, status } = (typeof body === 'object' && body !== null ? body : {}) as Record<string, unknown>
  const known = typeof code === 'string' && typeof text === 'string' && typeof status === 'number'
  return new PetStoreError({
    code: known ? code : 'unexpected_response',
    status: known ? status : response.status,
    message: known ? text : 'listEvents: the stream ended with an error message that is not an Error body',
    operation: 'listEvents',
    requestId: response.headers.get('x-request-id') ?? undefined,
    attempts: 1
  })
}

/** The event a message carries; undefined for a message that is not one (a comment-only or empty one). */
function eventOf (message: EventSourceMessage, response: Response): PetStoreEvent | undefined {
  if (message.data === '') return undefined
  const unexpected = (what: string, cause?: unknown): PetStoreError => new PetStoreError({
    code: 'unexpected_response',
    status: response.status,
    message: `listEvents: a stream message (id ${message.id ?? 'none'}) ${what}`,
    operation: 'listEvents',
    requestId: response.headers.get('x-request-id') ?? undefined,
    attempts: 1,
    ...(cause === undefined ? {} : { cause })
  })
  let event: unknown
  try {
    event = parseJson(message.data)
  } catch (cause) {
    throw unexpected('whose data is not JSON', cause)
  }
  const id = (event as { id?: unknown } | null)?.id
  if (typeof event !== 'object' || event === null || typeof id !== 'number' || !Number.isSafeInteger(id)) throw unexpected('that is not an event')
  return event as PetStoreEvent
}

function streamError (settings: ClientSettings, reason: string, attempts: number, cause?: unknown, url?: URL): PetStoreError {
  return new PetStoreError({
    code: 'network_error',
    status: 0,
    message: `listEvents: GET ${(url ?? endpoint(settings, '/events')).href} (text/event-stream) failed: ${reason}`,
    operation: 'listEvents',
    requestId: undefined,
    attempts,
    ...(cause === undefined ? {} : { cause })
  })
}

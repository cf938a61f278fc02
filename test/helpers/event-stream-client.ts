import assert from 'node:assert/strict'
import { request, type IncomingMessage } from 'node:http'
import type { Event } from './events.js'
import { parseJson } from '../../src/infra/json/exact-json.js'
import { within } from './processes.js'

/** One message of a stream as received: its fields, and its data as text and parsed exactly. */
export interface StreamMessage {
  id: string
  event: string
  data: string
}

/** A stream of the feed read over a real socket, as an SSE client parses it (WHATWG HTML's algorithm, for the fields the feed sends). */
export interface StreamClient {
  status: number
  headers: IncomingMessage['headers']
  /** Every message so far, in order. */
  readonly messages: StreamMessage[]
  /** Every comment line so far (without the colon), and every `retry:` value. */
  readonly comments: string[]
  readonly retries: string[]
  /** The body so far, when the answer is not a stream (an error). */
  body: () => string
  /** Settles when the answer ends: `clean` when it ended as HTTP ends a body, `cut` when the connection was dropped. */
  readonly ended: Promise<'clean' | 'cut'>
  /** The events of the messages, parsed exactly. */
  events: () => Event[]
  /** Waits until `count` messages arrived (at most `ms`). */
  waitForMessages: (count: number, ms?: number) => Promise<void>
  /** Waits until `predicate` holds of what arrived (at most `ms`). */
  waitUntil: (predicate: () => boolean, what: string, ms?: number) => Promise<void>
  /** Stops reading: the socket's data stays unread in the kernel, as a consumer that hangs does. */
  stopReading: () => void
  /** Reads again (what waited in the kernel, then whatever ended the connection). */
  resumeReading: () => void
  /** Reads at most about `bytes` every `intervalMs`, nothing in between (a consumer slower than the feed), until `stop`. */
  readSlowly: (bytes: number, intervalMs: number) => { stop: () => void }
  close: () => void
}

/**
 * Opens `GET <path>` on `baseUrl` with `Accept: text/event-stream` (and `headers`), resolving once the answer's head
 * arrived. `baseUrl` may name a Unix socket instead: `unix:<socket path>`.
 */
export async function openStream (baseUrl: string, path: string, headers: Record<string, string>): Promise<StreamClient> {
  return within(15_000, `no answer to ${path}`, new Promise((resolve, reject) => {
    const socketPath = baseUrl.startsWith('unix:') ? baseUrl.slice('unix:'.length) : undefined
    const req = socketPath === undefined
      ? request(`${baseUrl}${path}`, { headers: { accept: 'text/event-stream', ...headers } })
      : request({ socketPath, path, headers: { accept: 'text/event-stream', ...headers } })
    req.on('error', reject)
    req.on('response', (res) => {
      const messages: StreamMessage[] = []
      const comments: string[] = []
      const retries: string[] = []
      const waiters = new Set<() => void>()
      let text = ''
      let pending = ''
      let fields: Partial<StreamMessage> = {}
      // what a slow reader may still take before it pauses (readSlowly); reading stops within the chunk that passes it
      let allowance = Infinity
      const pause = (): void => {
        res.pause()
        res.socket.pause()
      }
      const resume = (): void => {
        res.socket.resume()
        res.resume()
      }
      res.setEncoding('utf8')
      res.on('data', (chunk: string) => {
        allowance -= chunk.length
        if (allowance <= 0) pause()
        text += chunk
        pending += chunk
        let newline
        while ((newline = pending.indexOf('\n')) !== -1) {
          const line = pending.slice(0, newline)
          pending = pending.slice(newline + 1)
          if (line === '') {
            if (fields.data !== undefined) messages.push({ id: fields.id ?? '', event: fields.event ?? 'message', data: fields.data })
            fields = {}
          } else if (line.startsWith(':')) {
            comments.push(line.slice(1).trim())
          } else {
            const colon = line.indexOf(':')
            const name = line.slice(0, colon)
            const value = line.slice(colon + 1).replace(/^ /, '')
            if (name === 'retry') retries.push(value)
            else if (name === 'id' || name === 'event') fields[name] = value
            else if (name === 'data') fields.data = fields.data === undefined ? value : `${fields.data}\n${value}`
          }
        }
        for (const waiter of waiters) waiter()
      })
      const ended = new Promise<'clean' | 'cut'>((resolve) => {
        res.once('end', () => { resolve('clean') })
        res.once('aborted', () => { resolve('cut') })
        res.once('error', () => { resolve('cut') })
        res.once('close', () => { resolve(res.complete ? 'clean' : 'cut') })
      })
      ended.then(() => { for (const waiter of waiters) waiter() }, () => {})
      const waitUntil = async (predicate: () => boolean, what: string, ms = 20_000): Promise<void> => {
        if (predicate()) return
        await within(ms, `${what}: ${messages.length} messages arrived`, new Promise<void>((resolve) => {
          const check = (): void => {
            if (!predicate()) return
            waiters.delete(check)
            resolve()
          }
          waiters.add(check)
        }))
      }
      resolve({
        status: res.statusCode ?? 0,
        headers: res.headers,
        messages,
        comments,
        retries,
        body: () => text,
        ended,
        events: () => messages.map((message) => parseJson(message.data) as Event),
        waitForMessages: async (count, ms) => { await waitUntil(() => messages.length >= count, `waiting for ${count} messages`, ms) },
        waitUntil,
        stopReading: pause,
        resumeReading: resume,
        readSlowly: (bytes, intervalMs) => {
          const allow = (): void => {
            allowance = bytes
            resume()
          }
          allow()
          const timer = setInterval(allow, intervalMs)
          return {
            stop: () => {
              clearInterval(timer)
              allowance = Infinity
              resume()
            }
          }
        },
        close: () => { req.destroy() }
      })
    })
    req.end()
  }))
}

/** The messages of a stream as the JSON feed's page holds them: each message's `data` is the page's item, written alike. */
export function assertMessagesMatchPage (messages: readonly StreamMessage[], pageBody: string): void {
  const page = parseJson(pageBody) as Array<{ id: number, type: string }>
  assert.equal(`[${messages.map((message) => message.data).join(',')}]`, pageBody, 'each message\'s data is the page\'s item, byte for byte')
  assert.deepEqual(messages.map((message) => [message.id, message.event]), page.map((event) => [String(event.id), event.type]))
}

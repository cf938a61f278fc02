import { createServer, type IncomingHttpHeaders, type OutgoingHttpHeaders, type ServerResponse } from 'node:http'
import type { AddressInfo, Socket } from 'node:net'
import type { TestContext } from 'node:test'

/** One request a receiver got. */
export interface ReceivedWebhook {
  headers: IncomingHttpHeaders
  body: string
  at: number
}

/**
 * How the receiver answers a request: a status, the same with headers of its own or after holding the
 * request open a while, never (a blackhole: the connection stays open unanswered), or however `respond`
 * writes the response itself (a body streamed without end, say).
 */
export type Answer = number | { status: number, afterMs?: number, headers?: OutgoingHttpHeaders } | 'blackhole' | { respond: (response: ServerResponse) => void }

/** A real HTTP receiver on 127.0.0.1 that records what it gets and answers as told. */
export interface WebhookReceiver {
  url: string
  received: ReceivedWebhook[]
  /** The most requests it held at once so far: arrived and not yet answered (nor their connection closed). */
  readonly maxInFlight: number
  /** The connections open to it now (a sender's kept-alive ones included). */
  readonly connections: number
  /** Sets how the next requests are answered (by default 204), e.g. `() => 500`. */
  answer: (decide: (request: ReceivedWebhook, index: number) => Answer) => void
  /** Resolves once `count` requests have arrived; rejects after `timeoutMs`. */
  waitFor: (count: number, timeoutMs?: number) => Promise<ReceivedWebhook[]>
  close: () => Promise<void>
}

/** Starts a receiver (on `port`, or a free one), closed when the test ends. */
export async function webhookReceiver (t: TestContext, port = 0): Promise<WebhookReceiver> {
  const received: ReceivedWebhook[] = []
  const sockets = new Set<Socket>()
  const held: ServerResponse[] = []
  let decide: (request: ReceivedWebhook, index: number) => Answer = () => 204
  let waiters: Array<() => void> = []
  let inFlight = 0
  let maxInFlight = 0
  const server = createServer((request, response) => {
    inFlight++
    maxInFlight = Math.max(maxInFlight, inFlight)
    response.on('close', () => { inFlight-- })
    const chunks: Buffer[] = []
    request.on('data', (chunk: Buffer) => chunks.push(chunk))
    request.on('end', () => {
      const entry = { headers: request.headers, body: Buffer.concat(chunks).toString('utf8'), at: Date.now() }
      received.push(entry)
      const answer = decide(entry, received.length - 1)
      for (const wake of waiters) wake()
      if (answer === 'blackhole') {
        held.push(response)
        return
      }
      const reply = (status: number, headers: OutgoingHttpHeaders = {}): void => { response.writeHead(status, { 'content-type': 'text/plain', ...headers }).end('ok') }
      if (typeof answer === 'number') reply(answer)
      else if ('respond' in answer) answer.respond(response)
      else if (answer.afterMs === undefined) reply(answer.status, answer.headers)
      else setTimeout(() => { reply(answer.status, answer.headers) }, answer.afterMs)
    })
  })
  server.on('connection', (socket) => {
    sockets.add(socket)
    socket.on('close', () => sockets.delete(socket))
  })
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve))
  let closed = false
  const close = async (): Promise<void> => {
    if (closed) return
    closed = true
    for (const socket of sockets) socket.destroy()
    await new Promise<void>((resolve) => server.close(() => { resolve() }))
  }
  t.after(close)
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`,
    received,
    get maxInFlight () { return maxInFlight },
    get connections () { return sockets.size },
    answer: (next) => { decide = next },
    waitFor: async (count, timeoutMs = 15_000) => {
      const deadline = Date.now() + timeoutMs
      while (received.length < count) {
        const left = deadline - Date.now()
        if (left <= 0) throw new Error(`the receiver got ${received.length} requests within ${timeoutMs} ms, not ${count}`)
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, Math.min(left, 200))
          waiters.push(() => { clearTimeout(timer); resolve() })
        })
        waiters = []
      }
      return received.slice(0, count)
    },
    close
  }
}

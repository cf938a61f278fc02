import { request as httpRequest, type ClientRequest } from 'node:http'
import { connect, type Socket } from 'node:net'

/** One message a reader took off its socket: when the chunk holding its end arrived (the runner's `performance.now()`), its id, its pet. */
export interface StreamReceipt {
  at: number
  eventId: number
  /** The pet its data carries; '' when the reader was not asked for pets. */
  petId: string
}

export interface StreamReaderOptions {
  /** The id it starts after (`after`); undefined: from the oldest retained event. */
  after?: number
  /** Parse each message's data for its pet (a few readers); otherwise only `id:` lines are read (a thousand readers). */
  pets?: boolean
}

const OPEN_TIMEOUT_MS = 30_000

/** The stream's path: `pet.created` only, after `after` when given. */
function streamPath (after: number | undefined): string {
  return `/v1/events?type=pet.created${after === undefined ? '' : `&after=${after}`}`
}

function petIdOf (data: string): string {
  try {
    const id = (JSON.parse(data) as { data?: { pet?: { id?: unknown } } }).data?.pet?.id
    return typeof id === 'number' || typeof id === 'string' ? String(id) : ''
  } catch {
    return ''
  }
}

/**
 * A consumer of `GET /v1/events` as Server-Sent Events on a socket of its own (`node:http`, no agent), in the
 * runner's process: it splits what arrives into messages at blank lines and records each message's id (and, when
 * asked, its pet), nothing more, so that a thousand of them stay cheap. Comments (`: heartbeat`) are skipped.
 */
export class StreamReader {
  readonly ids: number[] = []
  readonly receipts: StreamReceipt[] = []
  /** When the last message arrived (0: none yet). */
  lastAt = 0
  /** When the service ended the stream (its response ended or its connection closed), if it did. */
  endedAt: number | undefined
  readonly #request: ClientRequest
  readonly #pets: boolean
  readonly #waiters = new Set<() => void>()
  #pending = ''
  #closedByUs = false

  private constructor (request: ClientRequest, pets: boolean) {
    this.#request = request
    this.#pets = pets
  }

  /** Opens a stream on `baseUrl` and resolves once its 200 head has arrived (rejects on any other answer). */
  static async open (baseUrl: string, headers: Record<string, string>, options: StreamReaderOptions = {}): Promise<StreamReader> {
    return await new Promise<StreamReader>((resolve, reject) => {
      const request = httpRequest(`${baseUrl}${streamPath(options.after)}`, {
        agent: false,
        headers: { ...headers, accept: 'text/event-stream' }
      })
      const reader = new StreamReader(request, options.pets === true)
      const timer = setTimeout(() => { request.destroy(new Error(`no answer to a stream within ${OPEN_TIMEOUT_MS} ms`)) }, OPEN_TIMEOUT_MS)
      request.once('response', (response) => {
        clearTimeout(timer)
        if (response.statusCode !== 200) {
          response.resume()
          request.destroy()
          reject(new Error(`a stream was answered ${response.statusCode ?? '?'}, not 200`))
          return
        }
        response.setEncoding('utf8')
        response.on('data', (chunk: string) => { reader.#take(chunk, performance.now()) })
        response.once('close', () => { reader.#ended() })
        // a connection cut while the body flows (the service's cut, or ours): its end is what `endedAt` records
        response.on('error', () => {})
        resolve(reader)
      })
      // on, not once: a cut connection may report again after the first error
      request.on('error', (error) => {
        clearTimeout(timer)
        reader.#ended()
        reject(error)
      })
      request.end()
    })
  }

  /** The highest id received (0: none). */
  get lastId (): number {
    return this.ids.at(-1) ?? 0
  }

  /** Resolves true once an id at or above `id` has been received, false after `timeoutMs` or when the stream has ended. */
  async waitForId (id: number, timeoutMs: number): Promise<boolean> {
    if (this.lastId >= id) return true
    return await new Promise<boolean>((resolve) => {
      const check = (): void => {
        if (this.lastId < id && this.endedAt === undefined) return
        done()
      }
      const done = (): void => {
        clearTimeout(timer)
        this.#waiters.delete(check)
        resolve(this.lastId >= id)
      }
      const timer = setTimeout(done, timeoutMs)
      this.#waiters.add(check)
    })
  }

  /** Hangs up (the service sees its consumer go away). */
  close (): void {
    this.#closedByUs = true
    this.#request.destroy()
  }

  #take (chunk: string, at: number): void {
    let text = this.#pending + chunk
    let end = text.indexOf('\n\n')
    while (end !== -1) {
      this.#message(text.slice(0, end), at)
      text = text.slice(end + 2)
      end = text.indexOf('\n\n')
    }
    this.#pending = text
    for (const check of [...this.#waiters]) check()
  }

  #message (message: string, at: number): void {
    if (!message.startsWith('id: ')) return
    const idEnd = message.indexOf('\n')
    const eventId = Number(message.slice(4, idEnd))
    this.ids.push(eventId)
    this.lastAt = at
    if (!this.#pets) return
    // data is the message's last line (sse-format.ts)
    const data = message.indexOf('\ndata: ')
    this.receipts.push({ at, eventId, petId: data === -1 ? '' : petIdOf(message.slice(data + 7)) })
  }

  #ended (): void {
    if (!this.#closedByUs) this.endedAt ??= performance.now()
    for (const check of [...this.#waiters]) check()
  }
}

/** Opens `count` readers, `batch` at a time (a thousand SYNs at once would overflow the listen backlog). */
export async function openReaders (baseUrl: string, headers: Record<string, string>, count: number, options: StreamReaderOptions = {}, batch = 100): Promise<StreamReader[]> {
  const readers: StreamReader[] = []
  try {
    while (readers.length < count) {
      readers.push(...await Promise.all(Array.from({ length: Math.min(batch, count - readers.length) }, async () => await StreamReader.open(baseUrl, headers, options))))
    }
    return readers
  } catch (error) {
    for (const reader of readers) reader.close()
    throw error
  }
}

/**
 * A consumer that asks for a stream and never reads: a raw socket that sends the request and is paused at once,
 * so the kernel's buffers on both sides fill and then the service's backlog for it grows. `closed` settles when
 * the socket ends; a paused socket sees the end only once it reads, so {@link drain} reads (and drops) what waits.
 */
export class SilentStream {
  readonly #socket: Socket
  readonly closed: Promise<void>
  bytesRead = 0

  constructor (baseUrl: string, headers: Record<string, string>, after: number | undefined) {
    const { hostname, port } = new URL(baseUrl)
    this.#socket = connect({ host: hostname, port: Number(port) })
    this.#socket.pause()
    this.closed = new Promise<void>((resolve) => { this.#socket.once('close', () => { resolve() }) })
    this.#socket.on('error', () => {})
    const head = Object.entries({ ...headers, accept: 'text/event-stream', host: `${hostname}:${port}` }).map(([name, value]) => `${name}: ${value}\r\n`).join('')
    this.#socket.write(`GET ${streamPath(after)} HTTP/1.1\r\n${head}\r\n`)
  }

  /** Starts reading (dropping what arrives): the end of a connection the service closed then shows. */
  drain (): void {
    this.#socket.on('data', (chunk: Buffer) => { this.bytesRead += chunk.length })
    this.#socket.resume()
  }

  close (): void {
    this.#socket.destroy()
  }
}

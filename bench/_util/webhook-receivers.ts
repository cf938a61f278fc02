import { createServer as createHttpServer, type Server as HttpServer } from 'node:http'
import { createServer as createTcpServer, type AddressInfo, type Server as TcpServer, type Socket } from 'node:net'
import { setTimeout as sleep } from 'node:timers/promises'

/** How a receiver answers: a 204 after `answerAfterMs` (0: at once), or never (`blackhole`: the connection is accepted and read, never answered). */
/** How a receiver answers (after `answerAfterMs`, or never: a blackhole), and the `rateLimit` its endpoint is registered with, if any. */
export type ReceiverBehaviour = { answerAfterMs: number, rateLimit?: number } | 'blackhole'

/** One request a receiver got: when (the runner's `performance.now()`) and the id of the pet its event carries. */
export interface Receipt {
  at: number
  petId: string
}

/**
 * A real HTTP receiver on 127.0.0.1 with a port of its own (the sender keeps a connection pool per origin, as it
 * would per receiving host), in the runner's process: it records each request's arrival and the pet of its event,
 * and verifies nothing (no signature check), so what it measures is the sender's.
 */
export class WebhookReceiver {
  readonly receipts: Receipt[] = []
  readonly #server: HttpServer | TcpServer
  readonly #sockets = new Set<Socket>()
  #url = ''

  private constructor (behaviour: ReceiverBehaviour) {
    if (behaviour === 'blackhole') {
      this.#server = createTcpServer((socket) => {
        // read and drop: the request is taken, the answer never comes
        socket.on('data', () => {}).on('error', () => {})
      })
    } else {
      const server = createHttpServer((request, response) => {
        const chunks: Buffer[] = []
        request.on('data', (chunk: Buffer) => chunks.push(chunk))
        request.on('end', () => {
          this.receipts.push({ at: performance.now(), petId: petIdOf(Buffer.concat(chunks).toString('utf8')) })
          const answer = (): void => { response.writeHead(204).end() }
          if (behaviour.answerAfterMs === 0) answer()
          else setTimeout(answer, behaviour.answerAfterMs)
        })
      })
      // the sender keeps its connections; a receiver closing them between bursts would measure reconnections
      server.keepAliveTimeout = 60_000
      this.#server = server
    }
    this.#server.on('connection', (socket: Socket) => {
      this.#sockets.add(socket)
      socket.on('close', () => this.#sockets.delete(socket))
    })
  }

  /** Starts a receiver on a free port of 127.0.0.1. */
  static async start (behaviour: ReceiverBehaviour): Promise<WebhookReceiver> {
    const receiver = new WebhookReceiver(behaviour)
    await new Promise<void>((resolve, reject) => {
      receiver.#server.once('error', reject)
      receiver.#server.listen(0, '127.0.0.1', resolve)
    })
    receiver.#url = `http://127.0.0.1:${(receiver.#server.address() as AddressInfo).port}/hooks`
    return receiver
  }

  get url (): string {
    return this.#url
  }

  /** Connections open to it now (a blackhole's are the attempts waiting for their time limit). */
  get connections (): number {
    return this.#sockets.size
  }

  /** Whether the events of every one of `petIds` came within `timeoutMs`. */
  async waitForPets (petIds: ReadonlySet<string>, timeoutMs: number): Promise<boolean> {
    const deadline = performance.now() + timeoutMs
    const seen = new Set<string>()
    for (let read = 0; ;) {
      for (; read < this.receipts.length; read++) {
        const petId = this.receipts[read]?.petId ?? ''
        if (petIds.has(petId)) seen.add(petId)
      }
      if (seen.size >= petIds.size) return true
      if (performance.now() > deadline) return false
      await sleep(20)
    }
  }

  async close (): Promise<void> {
    for (const socket of this.#sockets) socket.destroy()
    await new Promise<void>((resolve) => { this.#server.close(() => { resolve() }) })
  }
}

/** Starts one receiver per behaviour. */
export async function startReceivers (behaviours: readonly ReceiverBehaviour[]): Promise<WebhookReceiver[]> {
  return await Promise.all(behaviours.map(async (behaviour) => await WebhookReceiver.start(behaviour)))
}

/** The pet's id in a `pet.created` event's body (`data.pet.id`); '' for any other. */
function petIdOf (body: string): string {
  try {
    const event = JSON.parse(body) as { data?: { pet?: { id?: unknown } } }
    const id = event.data?.pet?.id
    return typeof id === 'number' || typeof id === 'string' ? String(id) : ''
  } catch {
    return ''
  }
}

import { once } from 'node:events'
import { connect, createServer, type Socket } from 'node:net'
import type { TestContext } from 'node:test'

/**
 * How an outage looks to the client:
 * - 'refuse': open connections are reset and new ones are reset as soon as accepted
 *   (a crashed or restarting server): clients fail fast;
 * - 'blackhole': nothing is forwarded or answered any more, open connections included,
 *   and nothing is closed (a partitioned network): only the client's own timeouts end a wait.
 */
export type CutMode = 'refuse' | 'blackhole'

export interface TcpProxy {
  /** The port on 127.0.0.1 that leads to the target while the proxy forwards. */
  readonly port: number
  /** Connections accepted so far: tells whether a client opened new ones. */
  readonly accepted: number
  /** Starts an outage; every connection, open or new, is subject to it. */
  cut: (mode: CutMode) => void
  /** Ends the outage: connections it touched are destroyed, new ones are forwarded again. */
  heal: () => void
  /** Destroys every connection and stops listening; also run when the test ends. */
  close: () => Promise<void>
}

/** One client connection and, once it is forwarded, its connection to the target. */
interface Link {
  client: Socket
  upstream: Socket | undefined
  /** Cut off by a blackhole: nothing flows, and a close on one side is not passed on. */
  frozen: boolean
}

// an RST where possible (what a dead server's host sends); a plain destroy while still connecting
function kill (socket: Socket | undefined): void {
  if (socket === undefined || socket.destroyed) return
  if (socket.connecting) socket.destroy()
  else socket.resetAndDestroy()
}

// a peer going away is what outages are made of, never an error of the proxy
function ignoreErrors (socket: Socket): void {
  socket.on('error', () => {})
}

/** A TCP proxy on 127.0.0.1 to `target` that a test can cut and heal; closed when the test ends. */
export async function startTcpProxy (t: TestContext, target: { host: string, port: number }): Promise<TcpProxy> {
  let state: 'forward' | CutMode = 'forward'
  let accepted = 0
  const links = new Set<Link>()

  function drop (link: Link): void {
    links.delete(link)
    kill(link.client)
    kill(link.upstream)
  }

  function freeze (link: Link): void {
    link.frozen = true
    // unpipe stops the forwarding; pause stops reading, so bytes pile up in kernel buffers as on a dead path
    link.client.unpipe()
    link.client.pause()
    link.upstream?.unpipe()
    link.upstream?.pause()
  }

  // accepting even while cut keeps the port: a closed listener might not get it back on heal
  const server = createServer((client) => {
    accepted++
    ignoreErrors(client)
    if (state === 'refuse') {
      kill(client)
      return
    }
    const link: Link = { client, upstream: undefined, frozen: false }
    links.add(link)
    if (state === 'blackhole') {
      freeze(link)
      return
    }
    const upstream = connect(target)
    ignoreErrors(upstream)
    link.upstream = upstream
    // pipe passes half-closes on (the client's goodbye), and closing either side closes the other
    client.pipe(upstream)
    upstream.pipe(client)
    const closed = (): void => { if (!link.frozen) drop(link) }
    client.on('close', closed)
    upstream.on('close', closed)
  })
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  // after listening, a server error (e.g. EMFILE on accept) only costs that one connection
  server.on('error', () => {})
  const address = server.address()
  if (address === null || typeof address === 'string') throw new Error('the proxy has no TCP address')

  let closing: Promise<void> | undefined
  const proxy: TcpProxy = {
    port: address.port,
    get accepted () { return accepted },
    cut (mode) {
      state = mode
      for (const link of [...links]) {
        if (mode === 'refuse') drop(link)
        else freeze(link)
      }
    },
    heal () {
      state = 'forward'
      // resuming a frozen link would replay stale requests long after the client gave up on them
      for (const link of [...links]) if (link.frozen) drop(link)
    },
    close () {
      closing ??= new Promise<void>((resolve) => {
        state = 'refuse'
        for (const link of [...links]) drop(link)
        // server.close waits for open connections: all were just destroyed
        server.close(() => { resolve() })
      })
      return closing
    }
  }
  t.after(() => proxy.close())
  return proxy
}

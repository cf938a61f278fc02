import { closeSync, openSync, readSync } from 'node:fs'

// the kernel's socket tables; a listening socket's rx_queue there is its accept queue's length
const IPV4_TABLE = '/proc/net/tcp'
const IPV6_TABLE = '/proc/net/tcp6'
const SOCKET_TABLES = [IPV4_TABLE, IPV6_TABLE]
const LISTEN_STATE = '0A'
// a read of the tables: the listening sockets come first, and a few of them fit in one
const CHUNK_BYTES = 16 * 1024

/**
 * How many connections the kernel holds for the socket listening on `port`, accepted by TCP but not yet
 * by this process (its accept queue), from Linux's socket tables; undefined where they cannot be read
 * (another OS). The event loop accepts one connection per turn, so this is how far behind new clients are.
 *
 * Linux lists a table's listening sockets before all others, and writes the table as it is read, so the
 * reading stops at the first socket that is not listening: the rest (a line per connection of the whole
 * network namespace, thousands on a busy host, about 10 ms of the kernel's time to write) is never made.
 * `tables`: the kernel's both by default; {@link socketTablesFor} names the one a listening socket is in.
 */
export function acceptQueueLength (port: number, tables: readonly string[] = SOCKET_TABLES): number | undefined {
  const local = `:${port.toString(16).toUpperCase().padStart(4, '0')}`
  let found: number | undefined
  for (const table of tables) {
    let fd: number
    try {
      fd = openSync(table, 'r')
    } catch {
      continue
    }
    try {
      found = listeningQueue(fd, local, found)
    } finally {
      closeSync(fd)
    }
  }
  return found
}

/** `found` plus the rx_queue of the lines of `fd`'s listening section whose local address ends in `local`. */
function listeningQueue (fd: number, local: string, found: number | undefined): number | undefined {
  const chunk = Buffer.allocUnsafe(CHUNK_BYTES)
  let rest = ''
  let header = true
  for (;;) {
    const bytes = readSync(fd, chunk, 0, CHUNK_BYTES, null)
    const lines = (rest + chunk.toString('latin1', 0, bytes)).split('\n')
    // the last piece is a line not yet complete, unless the table has ended
    rest = bytes === 0 ? '' : lines.pop() as string
    for (const line of lines) {
      if (header) {
        header = false
        continue
      }
      // "sl local_address rem_address st tx_queue:rx_queue …", one socket a line
      const [, address, , state, queues] = line.trim().split(/\s+/)
      if (state === undefined) continue
      if (state !== LISTEN_STATE) return found
      if (address?.endsWith(local) !== true || queues === undefined) continue
      found = (found ?? 0) + Number.parseInt(queues.slice(queues.indexOf(':') + 1), 16)
    }
    if (bytes === 0) return found
  }
}

/**
 * The socket table that lists a socket listening on an address of `family` (`server.address().family`): only
 * that one need be read. The other is not free even when it lists nothing: the kernel walks every connection of
 * the namespace to find that it has none to write (about 4.5 ms with 300 IPv4 connections on this bench's host).
 */
export function socketTablesFor (family: string): readonly string[] {
  return family === 'IPv4' ? [IPV4_TABLE] : family === 'IPv6' ? [IPV6_TABLE] : SOCKET_TABLES
}

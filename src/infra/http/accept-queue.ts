import { readFileSync } from 'node:fs'

// the kernel's socket tables; a listening socket's rx_queue there is its accept queue's length
const SOCKET_TABLES = ['/proc/net/tcp', '/proc/net/tcp6']
const LISTEN_STATE = '0A'

/**
 * How many connections the kernel holds for the socket listening on `port`, accepted by TCP but not yet
 * by this process (its accept queue), from Linux's socket tables; undefined where they cannot be read
 * (another OS). The event loop accepts one connection per turn, so this is how far behind new clients are.
 */
export function acceptQueueLength (port: number): number | undefined {
  const local = `:${port.toString(16).toUpperCase().padStart(4, '0')}`
  let found: number | undefined
  for (const table of SOCKET_TABLES) {
    let text: string
    try {
      text = readFileSync(table, 'latin1')
    } catch {
      continue
    }
    // "sl local_address rem_address st tx_queue:rx_queue …", one socket a line
    for (const line of text.split('\n')) {
      const [, address, , state, queues] = line.trim().split(/\s+/)
      if (state !== LISTEN_STATE || address?.endsWith(local) !== true || queues === undefined) continue
      found = (found ?? 0) + Number.parseInt(queues.slice(queues.indexOf(':') + 1), 16)
    }
  }
  return found
}

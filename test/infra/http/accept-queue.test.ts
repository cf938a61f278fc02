import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { connect, type Socket } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'node:test'
import { setTimeout as sleep } from 'node:timers/promises'
import { acceptQueueLength, socketTablesFor } from '../../../src/infra/http/accept-queue.js'

const LINUX = process.platform === 'linux'

test('When a listening process accepts nothing, then acceptQueueLength reads how many connections the kernel holds for it', { skip: LINUX ? false : 'reads Linux\'s socket tables' }, async (t) => {
  // a real listener in another process, stopped: the kernel completes handshakes into its accept queue
  const child = spawn(process.execPath, ['-e', "require('node:net').createServer().listen(0, '127.0.0.1', function () { console.log(this.address().port) })"], { stdio: ['ignore', 'pipe', 'inherit'] })
  t.after(() => { child.kill('SIGCONT'); child.kill('SIGKILL') })
  const [line] = await once(child.stdout.setEncoding('utf8'), 'data') as [string]
  const port = Number(line.trim())
  assert.equal(acceptQueueLength(port), 0)
  child.kill('SIGSTOP')

  const sockets: Socket[] = []
  t.after(() => { for (const socket of sockets) socket.destroy() })
  for (let i = 0; i < 5; i++) {
    const socket = connect(port, '127.0.0.1')
    sockets.push(socket)
    await once(socket, 'connect')
  }
  // the last handshake's ACK reaches the queue a moment after connect resolves on this side
  for (let tries = 0; tries < 50 && acceptQueueLength(port) !== 5; tries++) await sleep(20)

  assert.equal(acceptQueueLength(port), 5)
  // listening on 127.0.0.1: the IPv4 table lists it, the IPv6 table does not
  assert.equal(acceptQueueLength(port, socketTablesFor('IPv4')), 5)
  assert.equal(acceptQueueLength(port, socketTablesFor('IPv6')), undefined)
  assert.equal(acceptQueueLength(port === 65_535 ? 1 : port + 1), undefined, 'a port nothing listens on')
})

/** A line of a socket table: a socket on 127.0.0.1:`port` in `state` (hex), `rxQueue` in its receive queue. */
function tableLine (slot: number, port: number, state: string, rxQueue: number): string {
  const hex = (n: number, width: number): string => n.toString(16).toUpperCase().padStart(width, '0')
  return `${String(slot).padStart(4)}: 0100007F:${hex(port, 4)} 00000000:0000 ${state} 00000000:${hex(rxQueue, 8)} 00:00000000 00000000     0        0 ${slot} 1 0000000000000000 100 0 0 10 0`
}

test('When a socket table lists its listening sockets and then the others, then acceptQueueLength reads only the listening ones, across reads', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'accept-queue-'))
  t.after(() => rm(dir, { recursive: true, force: true }))
  const port = 8080
  // more listening sockets than one read holds, then ours, then connections; the kernel never lists a listening
  // socket after a connection, so the last line (a listening socket on our port, 7 waiting) shows where the reading stopped
  const lines = [
    '  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode',
    ...Array.from({ length: 400 }, (_, i) => tableLine(i, 10_000 + i, '0A', 0)),
    tableLine(400, port, '0A', 3),
    ...Array.from({ length: 1_000 }, (_, i) => tableLine(401 + i, port, '01', 0)),
    tableLine(1_401, port, '0A', 7)
  ]
  const table = join(dir, 'tcp')
  await writeFile(table, `${lines.join('\n')}\n`)

  assert.equal(acceptQueueLength(port, [table]), 3)
  assert.equal(acceptQueueLength(10_399, [table]), 0, 'the last listening socket before a read\'s end')
  assert.equal(acceptQueueLength(9_999, [table]), undefined, 'a port nothing listens on')
})

import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { connect, type Socket } from 'node:net'
import { test } from 'node:test'
import { setTimeout as sleep } from 'node:timers/promises'
import { acceptQueueLength } from '../../../src/infra/http/accept-queue.js'

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
  assert.equal(acceptQueueLength(port === 65_535 ? 1 : port + 1), undefined, 'a port nothing listens on')
})

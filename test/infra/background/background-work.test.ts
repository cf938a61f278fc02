import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { setTimeout as sleep } from 'node:timers/promises'
import { BackgroundWorkers, type BackgroundWork } from '../../../src/infra/background/background-work.js'

/** Work that records its start and stop in `log`, its stop taking `stopMs` and failing when told to. */
function workOf (name: string, log: string[], stopMs: number, failure?: Error): BackgroundWork {
  return {
    start: () => { log.push(`${name} started`) },
    stop: async () => {
      log.push(`${name} stopping`)
      await sleep(stopMs)
      log.push(`${name} stopped`)
      if (failure !== undefined) throw failure
    }
  }
}

describe('BackgroundWorkers', () => {
  test('When work is added, then it is started at once; stopAll stops every one together and resolves once all have stopped', async () => {
    const log: string[] = []
    const workers = new BackgroundWorkers()
    const slow = workOf('slow', log, 100)
    assert.equal(workers.start(slow), slow)
    workers.start(workOf('quick', log, 10))
    assert.deepEqual(log, ['slow started', 'quick started'])

    await workers.stopAll()
    // both were stopping before either had stopped: together, not one after another
    assert.deepEqual(log.slice(2), ['slow stopping', 'quick stopping', 'quick stopped', 'slow stopped'])
  })

  test('When one stop fails, then stopAll still waits for the others before it rejects with that error, and work added afterwards is not started', async () => {
    const log: string[] = []
    const failure = new Error('sender would not close')
    const workers = new BackgroundWorkers()
    workers.start(workOf('failing', log, 0, failure))
    workers.start(workOf('slow', log, 50))

    await assert.rejects(workers.stopAll(), failure)
    assert.ok(log.includes('slow stopped'), 'stopAll rejected before the slow one stopped')
    workers.start(workOf('late', log, 0))
    assert.ok(!log.includes('late started'))
  })
})

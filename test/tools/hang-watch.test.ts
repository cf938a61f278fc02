import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import type { TestEvent } from 'node:test/reporters'
import { HangWatch } from '../../scripts/test-suites/hang-watch.js'

const FILE = '/repo/test/bin/server.test.ts'
const LIMITS = { exitGraceMs: 60_000, fileTimeoutMs: 30 * 60_000 }

// the events as node:test's run() emits them: a file's own test is named after its path; on Node 24 a
// child's events name the file whose process sent them (entryFile), Node 20's do not
function fileItself (type: 'test:dequeue' | 'test:complete'): TestEvent {
  return { type, data: { name: FILE, nesting: 0, file: FILE, line: 1, column: 1 } } as unknown as TestEvent
}
function topLevel (type: 'test:dequeue' | 'test:complete', name: string, entryFile: string | null = FILE): TestEvent {
  return { type, data: { name, nesting: 0, file: FILE, line: 7, column: 3, ...(entryFile === null ? {} : { entryFile }) } } as unknown as TestEvent
}

function watching (events: Array<[at: number, event: TestEvent]>): HangWatch {
  const watch = new HangWatch(LIMITS)
  for (const [at, event] of events) watch.add(event, at)
  return watch
}

describe('which test files\' processes hang, from node:test\'s events', () => {
  test('When a file\'s tests are all done and its process has not exited a grace later, then it is due to be killed, once, and named if it outlives the kill', () => {
    const watch = watching([[0, fileItself('test:dequeue')], [500, topLevel('test:dequeue', 'a test that times out')], [1_000, topLevel('test:complete', 'a test that times out')]])

    assert.deepEqual(watch.due(1_000 + LIMITS.exitGraceMs - 1), [])
    assert.deepEqual(watch.due(1_000 + LIMITS.exitGraceMs), [{ file: FILE, reason: 'its tests were done 60 s ago and its process had not exited' }])
    assert.deepEqual(watch.due(1_000 + 2 * LIMITS.exitGraceMs), [], 'a file is killed once')
    assert.deepEqual(watch.outlivedKill(1_000 + 2 * LIMITS.exitGraceMs), [FILE])
  })

  test('When a file\'s next test runs or its process has ended, then it is not due; when it runs past the file limit, then it is', () => {
    const running = watching([[0, fileItself('test:dequeue')], [0, topLevel('test:dequeue', 'first')], [10, topLevel('test:complete', 'first')], [10, topLevel('test:dequeue', 'a build that takes 15 minutes')]])
    const ended = watching([[0, fileItself('test:dequeue')], [0, topLevel('test:dequeue', 'first')], [10, topLevel('test:complete', 'first')], [20, fileItself('test:complete')]])

    assert.deepEqual(running.due(15 * 60_000), [])
    assert.deepEqual(ended.due(LIMITS.fileTimeoutMs * 2), [])
    assert.deepEqual(running.due(LIMITS.fileTimeoutMs), [{ file: FILE, reason: 'still running 1800 s after it started' }])
    assert.deepEqual(ended.spans(LIMITS.fileTimeoutMs), [[FILE, 20]])
  })

  test('When the events do not name the file whose process sent them (Node 20), then only the file limit applies', () => {
    const watch = watching([[0, fileItself('test:dequeue')], [0, topLevel('test:dequeue', 'a test', null)], [10, topLevel('test:complete', 'a test', null)]])

    assert.deepEqual(watch.due(10 + LIMITS.exitGraceMs), [])
    assert.equal(watch.due(LIMITS.fileTimeoutMs).length, 1)
  })
})

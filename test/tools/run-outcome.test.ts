import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import type { TestEvent } from 'node:test/reporters'
import { RunOutcome } from '../../scripts/test-suites/run-outcome.js'

const FILE = '/repo/test/pets/pets-get.test.ts'

// the events as node:test's run() emits them for a file's tests (Node 20.20 and 24.21 alike)
function reported (type: 'test:start' | 'test:pass' | 'test:fail', name: string, nesting: number, extra: Record<string, unknown> = {}): TestEvent {
  return { type, data: { name, nesting, file: FILE, testNumber: 1, details: { duration_ms: 1 }, ...extra } } as unknown as TestEvent
}

function outcomeOf (events: TestEvent[]): RunOutcome {
  const outcome = new RunOutcome()
  for (const event of events) outcome.add(event)
  return outcome
}

describe('the test run\'s outcome, from node:test\'s events', () => {
  test('When every test passes or is skipped, then the run is ok', () => {
    const outcome = outcomeOf([
      reported('test:start', 'GET /v1/pets/{petId} (sqlite)', 0),
      reported('test:start', 'When the pet exists, then it is returned', 1),
      reported('test:pass', 'When the pet exists, then it is returned', 1),
      reported('test:pass', 'GET /v1/pets/{petId} (sqlite)', 0, { details: { duration_ms: 1, type: 'suite' } }),
      reported('test:start', 'PostgreSQL database (postgres)', 0),
      reported('test:pass', 'PostgreSQL database (postgres)', 0, { skip: 'TEST_DATABASE_URL is not set', details: { duration_ms: 0, type: 'suite' } })
    ])

    assert.equal(outcome.ok, true)
  })

  test('When a nested test fails or is cancelled, then the run is not ok and names it; a failing todo test does not count', () => {
    const outcome = outcomeOf([
      reported('test:start', 'suite', 0),
      reported('test:start', 'a test that times out', 1),
      reported('test:fail', 'a test that times out', 1, { details: { duration_ms: 1, error: { failureType: 'testTimeoutFailure' } } }),
      reported('test:start', 'not done yet', 1),
      reported('test:fail', 'not done yet', 1, { todo: true, details: { duration_ms: 1, error: { failureType: 'testCodeFailure' } } })
    ])

    assert.equal(outcome.ok, false)
    assert.deepEqual(outcome.failures, ['a test that times out: testTimeoutFailure'])
  })

  test('When a file\'s process crashes before any test, then node:test fails the file itself and the run is not ok', () => {
    const outcome = outcomeOf([reported('test:fail', FILE, 0, { details: { duration_ms: 1, error: { failureType: 'testCodeFailure' } } })])

    assert.equal(outcome.ok, false)
    assert.deepEqual(outcome.failures, [`${FILE}: testCodeFailure`])
  })

  test('When a file reports no test, then node:test passes the file itself, and the run is not ok and names the file', () => {
    const outcome = outcomeOf([reported('test:start', FILE, 0), reported('test:pass', FILE, 0)])

    assert.equal(outcome.ok, false)
    assert.deepEqual(outcome.filesWithoutTests, [FILE])
  })

  test('When the run-level summary (Node 24) is not a success, then the run is not ok', () => {
    const outcome = outcomeOf([{ type: 'test:summary', data: { success: false, counts: {} } } as unknown as TestEvent])

    assert.equal(outcome.ok, false)
  })

  test('When tests run under names marking their store, then each counts for the innermost mark; suites, skipped and unmarked tests do not', () => {
    const outcome = outcomeOf([
      reported('test:start', 'operator CLI (postgres)', 0),
      reported('test:start', 'keys', 1),
      reported('test:start', 'When a key is created, then it is printed once', 2),
      reported('test:pass', 'When a key is created, then it is printed once', 2),
      reported('test:start', 'When a key is revoked, then it stops working', 2),
      reported('test:fail', 'When a key is revoked, then it stops working', 2, { details: { duration_ms: 1, error: {} } }),
      reported('test:pass', 'keys', 1, { details: { duration_ms: 1, type: 'suite' } }),
      reported('test:start', 'the release', 0),
      reported('test:start', 'When the release runs (sqlite), then it serves', 1),
      reported('test:pass', 'When the release runs (sqlite), then it serves', 1),
      reported('test:start', 'When it is skipped (sqlite)', 1),
      reported('test:pass', 'When it is skipped (sqlite)', 1, { skip: true }),
      reported('test:start', 'When int8 text is parsed, then it is exact', 1),
      reported('test:pass', 'When int8 text is parsed, then it is exact', 1)
    ])

    assert.equal(outcome.describeStores({ TEST_DATABASE_URL: 'postgres://server/test' }), 'stores: sqlite 1, postgres 2')
  })

  test('When PostgreSQL is not configured or TEST_STORES leaves a store out, then the stores line says so', () => {
    const outcome = new RunOutcome()

    assert.equal(outcome.describeStores({}), 'stores: sqlite 0, postgres 0 (PostgreSQL not configured: TEST_DATABASE_URL is not set, so its cases did not run)')
    assert.equal(outcome.describeStores({ TEST_DATABASE_URL: ' ' }), 'stores: sqlite 0, postgres 0 (PostgreSQL not configured: TEST_DATABASE_URL is not set, so its cases did not run)')
    assert.equal(outcome.describeStores({ TEST_DATABASE_URL: 'postgres://server/test', TEST_STORES: 'postgres' }), 'stores: sqlite 0 (TEST_STORES=postgres leaves it out of the store suites), postgres 0')
  })
})

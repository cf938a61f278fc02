import assert from 'node:assert/strict'
import { Readable } from 'node:stream'
import { describe, test } from 'node:test'
import { pino } from 'pino'
import { buildTestApp, createdPet, testStores, type TestApp } from '../helpers/build-app.js'
import { openStream } from '../helpers/event-stream-client.js'
import { captureLogs, type CapturedLogs, type LogRecord } from '../helpers/log-capture.js'

const INFO = pino.levels.values.info as number
const DEBUG = pino.levels.values.debug as number

/** The app listening on a port of its own: streams are read over a real socket. */
async function listening (api: TestApp): Promise<string> {
  await api.app.listen({ port: 0, host: '127.0.0.1' })
  return `http://127.0.0.1:${(api.app.server.address() as { port: number }).port}`
}

/** Waits (polling, at most 10 s) until a record matches `predicate`; returns it. */
async function logged (logs: CapturedLogs, predicate: (record: LogRecord) => boolean, what: string): Promise<LogRecord> {
  for (const deadline = Date.now() + 10_000; ; await new Promise((resolve) => setTimeout(resolve, 20))) {
    const found = logs.records().find(predicate)
    if (found !== undefined) return found
    assert.ok(Date.now() < deadline, `${what} was never logged; the log:\n${logs.lines.join('')}`)
  }
}

for (const store of testStores()) {
  describe(`the event stream's log lines (${store})`, () => {
    test('When consumers hang up on their streams, as every consumer ends one, then the log says so at debug, never at info', async (t) => {
      const logs = captureLogs()
      const api = await buildTestApp(t, { store, logStream: logs.stream })
      const base = await listening(api)
      await createdPet(api, { name: 'Rex', categoryId: 1 })

      for (let i = 0; i < 3; i++) {
        const stream = await openStream(base, '/v1/events', api.auth)
        await stream.waitForMessages(1)
        stream.close()
        await stream.ended
      }
      const hangUps = async (): Promise<LogRecord[]> => {
        await logged(logs, (record) => record.msg === 'stream closed prematurely' && logs.records().filter((each) => each.msg === record.msg).length === 3, 'the third hang-up')
        return logs.records().filter((record) => record.msg === 'stream closed prematurely')
      }

      assert.deepEqual((await hangUps()).map((record) => record.level), [DEBUG, DEBUG, DEBUG], 'each hang-up at debug')
      const noisy = logs.records().filter((record) => Number(record.level) >= INFO && /stream/i.test(String(record.msg)))
      assert.deepEqual(noisy, [], 'nothing about the streams at info or above: an ordinary disconnect is not news')
    })
  })
}

describe('a stream answer that fails', () => {
  test('When a text/event-stream answer fails on the server\'s side (not its consumer hanging up), then it is still logged at warn', async (t) => {
    const logs = captureLogs()
    const api = await buildTestApp(t, { logStream: logs.stream })
    // a route of the test's own, whose body breaks after its first message: a failure of the stream itself
    api.app.get('/test/failing-event-stream', async (_request, reply) => {
      const body = new Readable({ read () {} })
      body.push('retry: 2000\n\n')
      setTimeout(() => { body.destroy(new Error('the source of the stream failed')) }, 50)
      return reply.type('text/event-stream').send(body)
    })
    const base = await listening(api)

    const stream = await openStream(base, '/test/failing-event-stream', {})
    await stream.ended

    const failure = await logged(logs, (record) => record.msg === 'response terminated with an error with headers already sent', 'the failure')
    assert.equal(failure.level, pino.levels.values.warn)
    assert.match(JSON.stringify(failure.err), /the source of the stream failed/)
  })
})

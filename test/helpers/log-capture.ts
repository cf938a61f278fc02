import assert from 'node:assert/strict'
import type { LogStream } from '../../src/infra/logging/logging.js'

/** One pino JSON line, parsed. */
export type LogRecord = Record<string, unknown>

export interface CapturedLogs {
  /** Pass as `logStream` to buildTestApp. */
  stream: LogStream
  /** Every line written so far, exactly as written. */
  readonly lines: string[]
  /** Every line parsed as JSON; fails the test on a line that is not one JSON object. */
  records (): LogRecord[]
}

/** A log stream that keeps what the app writes, for the test to read back. */
export function captureLogs (): CapturedLogs {
  const lines: string[] = []
  return {
    stream: { write: (line) => { lines.push(line) } },
    lines,
    records: () => lines.map((line) => {
      let parsed: unknown
      assert.doesNotThrow(() => { parsed = JSON.parse(line) }, `log line is not JSON: ${line}`)
      assert.ok(typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed), `log line is not a JSON object: ${line}`)
      return parsed as LogRecord
    })
  }
}

/**
 * A log line as someone reading the log could recover it: the line itself plus the text of
 * every Buffer pino serialized in it as `{"type":"Buffer","data":[…]}` (e.g. an error's raw packet).
 */
export function recoverableText (line: string): string {
  const decoded: string[] = []
  const walk = (value: unknown): void => {
    if (Array.isArray(value)) {
      value.forEach(walk)
    } else if (typeof value === 'object' && value !== null) {
      const record = value as Record<string, unknown>
      if (record.type === 'Buffer' && Array.isArray(record.data) && record.data.every((byte) => typeof byte === 'number')) {
        decoded.push(Buffer.from(record.data).toString('latin1'))
      }
      Object.values(record).forEach(walk)
    }
  }
  try {
    walk(JSON.parse(line))
  } catch {
    // not JSON: the line as written is all there is
  }
  return [line, ...decoded].join('\n')
}

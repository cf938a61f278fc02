/** What a fuzzing run reports: a failed check with the request as sent, and counts of what it saw. */
import type { LightMyRequestResponse } from 'fastify'
import { shorten } from './fuzz-request.js'

/** A failed property: what was wrong, with the request as sent and the answer. */
export class FuzzFailure extends Error {
  constructor (problems: string[], sent: string, res: LightMyRequestResponse | undefined) {
    super([
      ...problems.map((problem) => `✗ ${problem}`),
      'request as sent:',
      sent,
      ...(res === undefined ? [] : [`answer: ${res.statusCode} ${String(res.headers['content-type'] ?? '')} ${shorten(res.body, 600)}`])
    ].join('\n'))
    this.name = 'FuzzFailure'
    // where in the fuzzer it was noticed says nothing about the service: the report shows the request instead
    this.stack = `${this.name}: ${this.message}`
  }
}

/** Counts of what a run saw. */
export class FuzzStats {
  cases = 0
  requests = 0
  readonly statuses = new Map<string, number>()

  count (operation: string, status: number): void {
    this.requests++
    const key = `${operation} ${status}`
    this.statuses.set(key, (this.statuses.get(key) ?? 0) + 1)
  }

  /** `listPets 200: 120, listPets 400: 80, …` sorted by operation and status. */
  summary (): string {
    return [...this.statuses.entries()].sort(([a], [b]) => a.localeCompare(b)).map(([key, count]) => `${key}: ${count}`).join(', ')
  }
}

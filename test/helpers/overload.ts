import assert from 'node:assert/strict'
import { Agent, request } from 'node:http'
import { setTimeout as sleep } from 'node:timers/promises'
import { ensureWrk } from '../../tools/harness/wrk.js'
import type { ServerProcess } from '../../tools/harness/server-process.js'

/** One answer as the client read it. */
export interface Answer {
  status: number
  headers: Record<string, string | string[] | undefined>
  body: string
}

/** A request with its body; a fresh connection unless `agent` keeps one alive. */
export async function send (port: number, method: string, path: string, headers: Record<string, string> = {}, body?: string, agent: Agent | false = false): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, method, path, headers, agent }, (res) => {
      let text = ''
      res.setEncoding('utf8').on('data', (chunk: string) => { text += chunk }).on('end', () => { resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text }) })
    })
    req.setTimeout(20_000, () => { req.destroy(new Error(`${method} ${path} got no answer in 20 s`)) })
    req.on('error', reject).end(body)
  })
}

/** GET `path`; a fresh connection unless `agent` keeps one alive. */
export async function get (server: ServerProcess, path: string, headers: Record<string, string> = {}, agent: Agent | false = false): Promise<Answer> {
  return send(server.port, 'GET', path, headers, undefined, agent)
}

/** The shed answers the server counted (`petstore_overload_shed_total`, on its METRICS_PORT). */
export async function shedCount (metricsPort: number): Promise<number> {
  const text = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text()
  const match = /^petstore_overload_shed_total (\d+)$/m.exec(text)
  assert.ok(match !== null, 'petstore_overload_shed_total is not exported')
  return Number(match[1])
}

/** Polls until `until` holds of an answer of `path` (on a fresh connection each time), for at most 20 s (a bound against a hang). */
export async function pollUntil (server: ServerProcess, path: string, until: (answer: Answer) => boolean, each: () => Promise<void> = async () => {}, headers: Record<string, string> = {}): Promise<Answer> {
  const deadline = Date.now() + 20_000
  for (;;) {
    await each()
    const answer = await get(server, path, headers)
    if (until(answer)) return answer
    assert.ok(Date.now() < deadline, `${path} never answered as expected; last: ${answer.status} ${answer.body}`)
    await sleep(100)
  }
}

/** Keeps `concurrency` GETs of `path` in flight on kept-alive connections until stopped; every answer is kept. */
export function keepGetting (server: ServerProcess, path: string, headers: Record<string, string>, concurrency: number): { answers: Answer[], stop: () => Promise<void> } {
  const agent = new Agent({ keepAlive: true, maxSockets: concurrency })
  const answers: Answer[] = []
  const state = { running: true }
  const loops = Array.from({ length: concurrency }, async () => {
    while (state.running) answers.push(await get(server, path, headers, agent))
  })
  return {
    answers,
    stop: async () => {
      state.running = false
      await Promise.all(loops)
      agent.destroy()
    }
  }
}

/** Answers counted by status: `{ 200: 12, 503: 3 }`. */
export function statusCounts (answers: readonly Answer[]): Record<number, number> {
  const counts: Record<number, number> = {}
  for (const { status } of answers) counts[status] = (counts[status] ?? 0) + 1
  return counts
}

/** `count` creates sent at once, each on a new connection, as a burst of new clients; their answers' statuses and codes, counted (`201`, `503 overloaded`). */
export async function createBurst (port: number, apiKey: string, count: number, name = 'Burst'): Promise<Record<string, number>> {
  const headers = { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' }
  const answers = await Promise.all(Array.from({ length: count }, async (_, i) => send(port, 'POST', '/v1/pets', headers, JSON.stringify({ name: `${name} ${i}`, categoryId: 1 }))))
  const counts: Record<string, number> = {}
  for (const answer of answers) {
    const key = answer.status === 201 ? '201' : `${answer.status} ${(JSON.parse(answer.body) as { code?: string }).code ?? ''}`
    counts[key] = (counts[key] ?? 0) + 1
  }
  return counts
}

/**
 * Stops the process for `stoppedMs` and lets it run for `runningMs`, over and over, until the returned
 * function is called (which leaves it running): a CPU-starved process, as a container at its CPU quota or a
 * noisy neighbour makes it, whose event loop really falls behind while no request of its own is slow.
 * Calling the returned function again waits for the first call.
 */
export function starve (pid: number, stoppedMs: number, runningMs: number): () => Promise<void> {
  const state = { running: true }
  const signal = (name: NodeJS.Signals): void => {
    try {
      process.kill(pid, name)
    } catch {
      // the process is gone (a test that failed has it killed): nothing left to starve
      state.running = false
    }
  }
  const loop = (async () => {
    while (state.running) {
      signal('SIGSTOP')
      await sleep(stoppedMs)
      signal('SIGCONT')
      await sleep(runningMs)
    }
  })()
  let stopped: Promise<void> | undefined
  return async () => {
    stopped ??= (async () => {
      state.running = false
      await loop
      signal('SIGCONT')
    })()
    await stopped
  }
}

/** Why wrk cannot be had here (the overload tests' load), or undefined; CI installs it (REQUIRE_WRK=1 makes its absence a failure). */
export function wrkMissing (): string | false {
  const reason = ensureWrk(() => {})
  if (reason !== undefined && process.env.REQUIRE_WRK === '1') assert.fail(`REQUIRE_WRK=1 but ${reason}`)
  return reason ?? false
}

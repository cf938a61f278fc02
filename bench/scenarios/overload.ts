import { request } from 'node:http'
import { setTimeout as sleep } from 'node:timers/promises'
import type { BenchContext } from '../_util/bench-context.js'
import { LIST_PATH } from '../_util/plan.js'
import { metricsUrlOf, startService, stopServer } from '../_util/servers.js'
import type { BenchStore } from '../_util/stores.js'

/** The load: wrk's connections on listPets, one process serving them. */
export const OVERLOAD_CONNECTIONS = 2_000
const LOAD_SECONDS = 20
const AFTER_SECONDS = 5
// a side request every this many ms, each on a new connection
const SIDE_INTERVAL_MS = 200
// a side request unanswered after this long is counted as unanswered
const SIDE_TIMEOUT_MS = 10_000
/** The issue's targets: every side request answered (200 or 503) within these, under the load and after it. */
export const SIDE_TARGET_MS = { during: 2_000, after: 500 } as const

/** One side request: its status (0: no answer, or a connection error) and how long it took. */
interface SideAnswer { status: number, ms: number }

/** GET listPets on a new connection; never rejects. */
async function sideRequest (port: number, headers: Record<string, string>): Promise<SideAnswer> {
  const started = performance.now()
  return new Promise((resolve) => {
    const done = (status: number): void => { resolve({ status, ms: performance.now() - started }) }
    const req = request({ host: '127.0.0.1', port, path: LIST_PATH, headers, agent: false }, (res) => {
      res.resume().on('end', () => { done(res.statusCode ?? 0) }).on('error', () => { done(0) })
    })
    req.setTimeout(SIDE_TIMEOUT_MS, () => { req.destroy() })
    req.on('error', () => { done(0) }).end()
  })
}

/** Side requests every {@link SIDE_INTERVAL_MS} until `until` resolves; each awaited. */
async function sideClient (port: number, headers: Record<string, string>, until: Promise<unknown>): Promise<SideAnswer[]> {
  const state = { over: false }
  until.finally(() => { state.over = true }).catch(() => {})
  const pending: Array<Promise<SideAnswer>> = []
  while (!state.over) {
    pending.push(sideRequest(port, headers))
    await sleep(SIDE_INTERVAL_MS)
  }
  return Promise.all(pending)
}

function summary (answers: readonly SideAnswer[], targetMs: number): string {
  const ms = answers.map((answer) => answer.ms).sort((a, b) => a - b)
  const p99 = ms[Math.min(ms.length - 1, Math.ceil(ms.length * 0.99) - 1)] ?? NaN
  const count = (status: number): number => answers.filter((answer) => answer.status === status).length
  const late = answers.filter((answer) => answer.status === 0 || answer.ms > targetMs).length
  return `${answers.length} side requests: ${count(200)}×200, ${count(503)}×503, ${count(0)} unanswered; p99 ${Math.round(p99)} ms, worst ${Math.round(ms.at(-1) ?? NaN)} ms; ` +
    `${late === 0 ? 'every one' : `${late} NOT`} answered within ${targetMs} ms`
}

async function shedTotal (metricsUrl: string | undefined): Promise<string> {
  if (metricsUrl === undefined) return '?'
  const text = await (await fetch(metricsUrl)).text()
  return /^petstore_overload_shed_total (\S+)$/m.exec(text)?.[1] ?? '?'
}

/**
 * wrk with {@link OVERLOAD_CONNECTIONS} connections on listPets for 20 s, and a side client that opens a
 * new connection per request (a balancer's probe, a fresh client) every 200 ms, during the load and
 * for 5 s after it: with load shedding off (as before it existed) and on (the default). Full run only.
 */
export async function overload (context: BenchContext, store: BenchStore): Promise<string[]> {
  const notes: string[] = []
  for (const shedding of ['false', 'true']) {
    const service = await startService(store.url, context.apiKey, { env: { OVERLOAD_SHEDDING: shedding } })
    try {
      const load = context.generator.run({ origin: service.baseUrl, headers: context.headers, requests: [{ method: 'GET', path: LIST_PATH }], connections: OVERLOAD_CONNECTIONS, durationSeconds: LOAD_SECONDS })
      // a second for wrk to open its connections: the side client measures the load, not its ramp
      await sleep(1_000)
      const during = await sideClient(service.port, context.headers, load.catch(() => undefined))
      const result = await load
      const after = await sideClient(service.port, context.headers, sleep(AFTER_SECONDS * 1000))
      notes.push(`Overload (${store.kind}, shedding ${shedding === 'true' ? 'on' : 'off'}): wrk -c${OVERLOAD_CONNECTIONS} listPets ${Math.round(result.reqPerSec)} req/s ` +
        `(${result.non2xx} non-2xx, ${result.errors} socket errors); under the load ${summary(during, SIDE_TARGET_MS.during)}; ` +
        `after it ${summary(after, SIDE_TARGET_MS.after)}; petstore_overload_shed_total ${await shedTotal(metricsUrlOf(service))}.`)
    } finally {
      await stopServer(service)
    }
  }
  return notes
}

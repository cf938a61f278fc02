/**
 * Sends one request over a socket of its own, exactly as written (no Host, two Hosts, an empty header), and
 * compares two servers' answers, log lines, counters and rows, allowing only what must differ from one process
 * to another: `Date`, a request id each generated, the seconds left in a rate-limit window (±1).
 */
import { hash } from 'node:crypto'
import { connect } from 'node:net'
import { isDeepStrictEqual } from 'node:util'
import { parseJson } from '../../src/infra/json/exact-json.js'
import { execSql } from '../../tools/harness/store-sql.js'
import { within } from '../../tools/harness/within.js'

/** A request as sent: its headers in order, `Content-Length` added for a body. */
export interface WireRequest {
  name: string
  method: string
  path: string
  headers: Array<[string, string]>
  body?: string
  /** The name of the key it carries, for counting requests per key. */
  key?: string
}

/** An answer as received: its headers in order, as the server wrote them. */
export interface Answer {
  status: number
  headers: Array<[string, string]>
  body: string
}

/** The SHA-256 of a key, hex: how `api_keys` holds it. */
export const keyHash = (key: string): string => hash('sha256', key, 'hex')

/** Sends `request` to 127.0.0.1:`port` on a new connection and reads its one answer. */
export async function exchange (port: number, request: WireRequest): Promise<Answer> {
  const body = request.body === undefined ? undefined : Buffer.from(request.body)
  const head = [`${request.method} ${request.path} HTTP/1.1`, ...request.headers.map(([name, value]) => `${name}: ${value}`),
    ...(body === undefined ? [] : [`Content-Length: ${body.length}`])].join('\r\n')
  return within(10_000, `no answer to "${request.name}" from port ${port}`, new Promise<Answer>((resolve, reject) => {
    const socket = connect(port, '127.0.0.1')
    let received = Buffer.alloc(0)
    // a server may answer (413) before it has read the whole body and close: the answer is what counts
    socket.on('error', () => {})
    socket.on('close', () => { reject(new Error(`the connection closed before a whole answer to "${request.name}": ${received.toString('latin1').slice(0, 500)}`)) })
    socket.on('data', (chunk: Buffer) => {
      received = Buffer.concat([received, chunk])
      const end = received.indexOf('\r\n\r\n')
      if (end === -1) return
      const [statusLine = '', ...lines] = received.subarray(0, end).toString('latin1').split('\r\n')
      const headers = lines.map((line): [string, string] => [line.slice(0, line.indexOf(':')), line.slice(line.indexOf(':') + 1).trim()])
      const status = Number(statusLine.split(' ')[1])
      const length = request.method === 'HEAD' || status === 304 || status === 204 ? 0 : Number(headers.find(([name]) => name.toLowerCase() === 'content-length')?.[1] ?? 0)
      if (received.length < end + 4 + length) return
      resolve({ status, headers, body: received.subarray(end + 4, end + 4 + length).toString('utf8') })
      socket.destroy()
    })
    socket.write(body === undefined ? `${head}\r\n\r\n` : Buffer.concat([Buffer.from(`${head}\r\n\r\n`), body]))
  }))
}

/** An answer's value of header `name` (lower case); several are joined as Node would. */
export function headerOf (answer: Answer, name: string): string | undefined {
  const values = answer.headers.filter(([key]) => key.toLowerCase() === name).map(([, value]) => value)
  return values.length === 0 ? undefined : values.join(', ')
}

const GENERATED_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/
const VALID_INCOMING_ID = /^[A-Za-z0-9._:@/+=-]{1,128}$/
const RATE_LIMIT = /^("[^"]+");r=(\d+);t=(\d+)$/

/** How the peer's answer differs from the service's, one line per difference; none when they are equal. */
export function diffAnswers (request: WireRequest, service: Answer, peer: Answer): string[] {
  const where = `"${request.name}" (${request.method} ${request.path.slice(0, 80)})`
  const differences: string[] = []
  if (service.status !== peer.status) differences.push(`${where}: status ${service.status} from the service, ${peer.status} from the peer`)
  const names = new Set([...service.headers, ...peer.headers].map(([name]) => name.toLowerCase()))
  const sentId = request.headers.find(([name]) => name.toLowerCase() === 'x-request-id')?.[1]
  for (const name of names) {
    const [ours, theirs] = [headerOf(service, name), headerOf(peer, name)]
    if (ours === undefined || theirs === undefined) {
      differences.push(`${where}: header ${name} only from the ${ours === undefined ? 'peer' : 'service'}: ${ours ?? theirs ?? ''}`)
      continue
    }
    const same = name === 'date'
      ? true
      : name === 'x-request-id'
        ? (sentId !== undefined && VALID_INCOMING_ID.test(sentId) ? ours === sentId && theirs === sentId : GENERATED_ID.test(ours) && GENERATED_ID.test(theirs))
        : name === 'ratelimit'
          ? sameRateLimit(ours, theirs)
          : name === 'retry-after' && service.status === 429
            ? Math.abs(Number(ours) - Number(theirs)) <= 1
            : ours === theirs
    if (!same) differences.push(`${where}: header ${name} is ${JSON.stringify(ours)} from the service, ${JSON.stringify(theirs)} from the peer`)
  }
  if (service.body !== peer.body) differences.push(`${where}: body ${JSON.stringify(service.body.slice(0, 300))} from the service, ${JSON.stringify(peer.body.slice(0, 300))} from the peer`)
  return differences
}

// the same policy and requests left; the seconds until the window resets within one (the two windows opened moments apart)
function sameRateLimit (ours: string, theirs: string): boolean {
  const [a, b] = [RATE_LIMIT.exec(ours), RATE_LIMIT.exec(theirs)]
  return a !== null && b !== null && a[1] === b[1] && a[2] === b[2] && Math.abs(Number(a[3]) - Number(b[3])) <= 1
}

/** Each request's log lines (JSON, with a `reqId`), by request id, in order. */
export function logLinesByRequest (stdout: string): Map<string, Array<Record<string, unknown>>> {
  const lines = new Map<string, Array<Record<string, unknown>>>()
  for (const text of stdout.split('\n')) {
    if (!text.startsWith('{')) continue
    const line = JSON.parse(text) as Record<string, unknown>
    if (typeof line.reqId !== 'string') continue
    lines.set(line.reqId, [...lines.get(line.reqId) ?? [], line])
  }
  return lines
}

// what each process has of its own: when it wrote the line, its pid, its request id (compared with the answers), how long it took
const PER_PROCESS = new Set(['time', 'pid', 'reqId', 'responseTime'])

/** How the peer's log lines of a request differ from the service's: the same lines, the same fields and values but the per-process ones. */
export function diffLogLines (request: WireRequest, service: Array<Record<string, unknown>>, peer: Array<Record<string, unknown>>): string[] {
  const shape = (line: Record<string, unknown>): Record<string, unknown> =>
    Object.fromEntries(Object.entries(line).map(([field, value]) => [field, field === 'responseTime' ? typeof value : value]).filter(([field]) => field === 'responseTime' || !PER_PROCESS.has(field as string)))
  const [ours, theirs] = [service.map(shape), peer.map(shape)]
  return isDeepStrictEqual(ours, theirs) ? [] : [`"${request.name}": log lines ${JSON.stringify(ours)} from the service, ${JSON.stringify(theirs)} from the peer`]
}

/** The non-zero samples of the metric families `names` at `url`, by name and sorted labels. */
export async function scrapeSamples (url: string, names: readonly string[]): Promise<Map<string, number>> {
  const text = await (await fetch(url, { signal: AbortSignal.timeout(10_000) })).text()
  const samples = new Map<string, number>()
  for (const line of text.split('\n')) {
    const match = /^([a-z_]+)(?:\{(.*)\})? (\S+)$/.exec(line)
    if (match === null || !names.includes(match[1] as string) || Number(match[3]) === 0) continue
    const labels = [...(match[2] ?? '').matchAll(/([a-z_]+)="((?:[^"\\]|\\.)*)"/g)].map(([, name, value]) => `${name}=${value}`).sort()
    samples.set(`${match[1]}{${labels.join(',')}}`, Number(match[3]))
  }
  return samples
}

// an event's data by its meaning, int64 values exact: PostgreSQL's service writes it with json_build_object's spacing
const eventData = (text: unknown): string => JSON.stringify(parseJson(String(text)), (_key, value: unknown) => typeof value === 'bigint' ? `${value}n` : value)

/** A store's pets, events (their data by meaning) and key uses, as comparable text, and when its events occurred (ms). */
export async function storeRows (url: string): Promise<{ pets: string[], events: string[], keys: string[], occurredAt: number[] }> {
  const pets = await execSql(url, 'SELECT id, name, CAST(category_id AS TEXT) AS category_id, status FROM pets ORDER BY id')
  const events = await execSql(url, 'SELECT id, type, CAST(data AS TEXT) AS data, occurred_at FROM events ORDER BY id')
  const keys = await execSql(url, 'SELECT id, name, role, revoked_at IS NULL AS active, last_used_at IS NOT NULL AS used FROM api_keys ORDER BY id')
  return {
    pets: pets.map((row) => JSON.stringify([String(row.id), row.name, row.category_id, row.status])),
    events: events.map((row) => JSON.stringify([String(row.id), row.type, eventData(row.data)])),
    keys: keys.map((row) => JSON.stringify([String(row.id), row.name, row.role, Boolean(row.active), Boolean(row.used)])),
    occurredAt: events.map((row) => new Date(row.occurred_at as number | Date).getTime())
  }
}

/** The request mix of the soak: each kind of request with the one status it must get, and the counters the load fills. */
import { randomBytes, randomUUID } from 'node:crypto'
import type autocannon from 'autocannon'
import { PET_STATUSES, type Seed } from './seed-store.js'

/** The statuses one kind of request got. */
export interface KindReport {
  expected: number
  total: number
  /** Statuses other than `expected`, with their counts. */
  unexpected: Record<string, number>
}

const UNEXPECTED_EXAMPLES = 10
/** A pet id no pet has: the largest the API accepts. */
const MISSING_PET_ID = Number.MAX_SAFE_INTEGER

/** One kind of request of the mix. */
export interface Kind {
  name: string
  expected: number
  /** Share of a cycle of the main connections' requests (weights are relative). */
  weight: number
  /**
   * Answered with `Connection: close` (Fastify closes the connection after any body-parser error).
   * autocannon 8 does not survive that: it reconnects without forgetting the request it had already
   * written on the closing socket, so every later response is matched to the request before it
   * (wrong `onResponse`, latencies measured from the wrong start). Such kinds therefore run on
   * {@link CLOSING_CONNECTIONS} connection(s) of their own, at most {@link CLOSING_RATE} requests a
   * second (about half are answered: each close loses the request already written), and count in
   * the statuses but not in the latency figures.
   */
  closesConnection?: boolean
  request: autocannon.Request
}

/** Connections, and requests a second, for the kinds answered with `Connection: close`. */
export const CLOSING_CONNECTIONS = 1
export const CLOSING_RATE = 40
/** Every request carries `X-Request-Id: soak.<kind>`; the echo tells which kind a response answers. */
const REQUEST_ID_PREFIX = 'soak.'

/** The request kinds, each with the status it must get, and per-kind counters filled by the load. */
export class Mix {
  readonly kinds: Kind[]
  readonly counts = new Map<string, KindReport>()
  readonly unexpectedExamples: Array<{ kind: string, status: number, body: string }> = []
  /** Responses whose echoed X-Request-Id names another kind than the request autocannon matched them with. */
  misattributed = 0
  /** Responses without the X-Request-Id their request sent. */
  withoutRequestId = 0
  readonly #byName = new Map<string, Kind>()

  constructor (kinds: Kind[]) {
    this.kinds = kinds
    for (const kind of kinds) {
      this.counts.set(kind.name, { expected: kind.expected, total: 0, unexpected: {} })
      this.#byName.set(kind.name, kind)
    }
  }

  /** The response to a request of kind `sent` (as autocannon matched it). */
  record (sent: Kind, status: number, body: string, headers: autocannon.Request['headers']): void {
    const echoed = headers === undefined ? undefined : headerValue(headers, 'x-request-id')
    const answered = echoed?.startsWith(REQUEST_ID_PREFIX) === true ? this.#byName.get(echoed.slice(REQUEST_ID_PREFIX.length)) : undefined
    let kind = sent
    if (answered === undefined) this.withoutRequestId++
    else if (answered !== sent) {
      this.misattributed++
      kind = answered
    }
    const counts = this.counts.get(kind.name)
    if (counts === undefined) return
    counts.total++
    if (status === kind.expected) return
    counts.unexpected[status] = (counts.unexpected[status] ?? 0) + 1
    if (this.unexpectedExamples.length < UNEXPECTED_EXAMPLES) this.unexpectedExamples.push({ kind: kind.name, status, body: body.slice(0, 300) })
  }

  /**
   * One cycle of requests for a connection, the kinds interleaved by smooth weighted round-robin
   * (a list, a create, a list, a read, …) rather than in blocks. autocannon gives every
   * connection its own deep copy (functions kept), so `setupRequest` may vary each request.
   */
  requests (kinds: Kind[]): autocannon.Request[] {
    const slots = kinds.reduce((sum, kind) => sum + kind.weight, 0)
    const current = kinds.map(() => 0)
    const sequence: autocannon.Request[] = []
    for (let slot = 0; slot < slots; slot++) {
      let best = 0
      kinds.forEach((kind, index) => {
        current[index] = (current[index] ?? 0) + kind.weight
        if ((current[index] ?? 0) > (current[best] ?? 0)) best = index
      })
      current[best] = (current[best] ?? 0) - slots
      const kind = kinds[best] as Kind
      sequence.push({
        ...kind.request,
        onResponse: (status: number, body: string, _context: object, headers: autocannon.Request['headers']) => { this.record(kind, status, body, headers) }
      })
    }
    return sequence
  }
}

function headerValue (headers: NonNullable<autocannon.Request['headers']>, name: string): string | undefined {
  for (const [key, value] of Object.entries(headers)) {
    if (key.toLowerCase() === name) return Array.isArray(value) ? value[0] : value
  }
  return undefined
}

/** The mix the soak sends: lists, creates, reads and bad requests, weighted as the soak's description says. */
export function buildMix (apiKey: string, seed: Seed): Mix {
  const id = (kind: string): Record<string, string> => ({ 'x-request-id': `${REQUEST_ID_PREFIX}${kind}` })
  const auth = { authorization: `Bearer ${apiKey}` }
  const json = { ...auth, 'content-type': 'application/json' }
  let created = 0
  let statusTurn = 0
  let limitTurn = 0
  const pick = <T>(values: readonly T[]): T => values[Math.floor(Math.random() * values.length)] as T
  return new Mix([
    // lists: 50 % of the main connections' requests
    { name: 'list', expected: 200, weight: 8, request: { method: 'GET', path: '/v1/pets?limit=20', headers: { ...auth, ...id('list') } } },
    {
      name: 'listByStatus',
      expected: 200,
      weight: 8,
      request: {
        method: 'GET',
        headers: { ...auth, ...id('listByStatus') },
        setupRequest: (request) => ({ ...request, path: `/v1/pets?limit=20&status=${PET_STATUSES[statusTurn++ % PET_STATUSES.length] ?? 'available'}` })
      }
    },
    { name: 'listNextPage', expected: 200, weight: 4, request: { method: 'GET', path: seed.nextPagePath, headers: { ...auth, ...id('listNextPage') } } },
    // creates: 15 %, each with a new Idempotency-Key
    {
      name: 'create',
      expected: 201,
      weight: 6,
      request: {
        method: 'POST',
        path: '/v1/pets',
        setupRequest: (request) => {
          const n = created++
          return {
            ...request,
            headers: { ...json, ...id('create'), 'idempotency-key': randomUUID() },
            body: JSON.stringify({ name: `Soak ${n}`, categoryId: 1 + (n % 7), status: PET_STATUSES[n % PET_STATUSES.length] })
          }
        }
      }
    },
    // reads of existing pets (the deprecated getPet): 15 %
    {
      name: 'getPet',
      expected: 200,
      weight: 6,
      request: { method: 'GET', headers: { ...auth, ...id('getPet') }, setupRequest: (request) => ({ ...request, path: `/v1/pets/${pick(seed.ids)}` }) }
    },
    // bad requests: 20 %
    { name: 'invalidBody', expected: 400, weight: 1, request: { method: 'POST', path: '/v1/pets', headers: { ...json, ...id('invalidBody') }, body: JSON.stringify({ name: '', categoryId: 1 }) } },
    { name: 'noKey', expected: 401, weight: 1, request: { method: 'GET', path: '/v1/pets?limit=20', headers: id('noKey') } },
    {
      name: 'wrongKey',
      expected: 401,
      weight: 1,
      request: { method: 'GET', path: '/v1/pets?limit=20', headers: { authorization: `Bearer soak_wrong_${randomBytes(24).toString('base64url')}`, ...id('wrongKey') } }
    },
    { name: 'unknownRoute', expected: 404, weight: 1, request: { method: 'GET', path: '/v1/no-such-route', headers: { ...auth, ...id('unknownRoute') } } },
    {
      name: 'badLimit',
      expected: 400,
      weight: 2,
      request: { method: 'GET', headers: { ...auth, ...id('badLimit') }, setupRequest: (request) => ({ ...request, path: `/v1/pets?limit=${['0', '101', 'abc'][limitTurn++ % 3] ?? '0'}` }) }
    },
    { name: 'missingPet', expected: 404, weight: 1, request: { method: 'GET', path: `/v1/pets/${MISSING_PET_ID}`, headers: { ...auth, ...id('missingPet') } } },
    { name: 'wrongContentType', expected: 415, weight: 1, request: { method: 'POST', path: '/v1/pets', headers: { ...auth, ...id('wrongContentType'), 'content-type': 'text/plain' }, body: 'name=Rex' } },
    // answered 400 with Connection: close, so on a connection of its own (see Kind.closesConnection)
    {
      name: 'malformedJson',
      expected: 400,
      weight: 1,
      closesConnection: true,
      request: { method: 'POST', path: '/v1/pets', headers: { ...json, ...id('malformedJson') }, body: '{"name": "Rex", "categoryId": ' }
    }
  ])
}

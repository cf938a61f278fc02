/**
 * The store and the requests the contract-equal peer (bench/peers/contract-equal/) is checked on: the same seed
 * for two stores, and about a hundred requests of `getPet`, `listPets`, `getInventory` and `createPet`, good and
 * bad, each sent to the service and to the peer in turn (test/tools/contract-equal-peer.test.ts).
 */
import { keyHash } from './contract-diff.js'
import type { Answer, WireRequest } from './contract-diff.js'

/** The keys the requests use, by name: from the environment or stored in `api_keys`. */
export const KEYS = {
  writeEnv: 'peertest-write-environment-key-0123456789',
  readEnv: 'peertest-read-environment-key-0123456789',
  writeStored: 'peertest-write-stored-key-0123456789abcdef',
  readStored: 'peertest-read-stored-key-0123456789abcdef',
  revoked: 'peertest-revoked-key-0123456789abcdef',
  burst: 'peertest-burst-key-0123456789abcdef'
} as const
export type KeyName = keyof typeof KEYS

/** What both servers are given besides their store and ports. */
export const SHARED_ENV = {
  PETSTORE_API_KEYS: KEYS.writeEnv,
  PETSTORE_READ_API_KEYS: KEYS.readEnv,
  PUBLIC_BASE_URL: 'https://api.petstore.test/v1',
  STAGING_BASE_URL: 'https://staging.petstore.test/v1',
  AUTH_FAILURE_LIMIT: '3',
  LOG_LEVEL: 'info',
  OVERLOAD_SHEDDING: 'false'
} as const

const HOST = 'api.petstore.test'
const BIG = '9223372036854775807'
const SMALL = '-9223372036854775808'

/** The seed, the same SQL for either store: the pets every read reads, and the stored keys. */
export function seedStatements (): Array<{ sql: string, params: unknown[] }> {
  const names = ['Rex', 'Ünïcödé 🐶 "quoted" \\ back', 'Big', 'Small', 'Beyond 2^53']
  const categories = ['1', '2', BIG, SMALL, '9007199254740993']
  const pets = Array.from({ length: 30 }, (_, i) => ({
    name: names[i] ?? `Pet ${i + 1}`,
    category: categories[i] ?? String(1 + (i % 5)),
    status: ['available', 'pending', 'sold'][i % 3] as string
  }))
  const stored: Array<[KeyName, string, string, string | null]> = [
    ['writeStored', 'ci-writer', 'write', null],
    ['readStored', 'dashboard', 'read', null],
    ['revoked', 'retired', 'write', '2026-01-02T00:00:00.000Z'],
    ['burst', 'burst', 'write', null]
  ]
  return [
    // int64 bounds written as SQL literals: a parameter would go through a double
    ...pets.map((pet) => ({ sql: `INSERT INTO pets (name, category_id, status) VALUES ($1, ${pet.category}, $2)`, params: [pet.name, pet.status] })),
    ...stored.map(([key, name, role, revokedAt]) => ({
      sql: 'INSERT INTO api_keys (name, key_hash, role, created_at, revoked_at) VALUES ($1, $2, $3, $4, $5)',
      params: [name, keyHash(KEYS[key]), role, '2026-01-01T00:00:00.000Z', revokedAt]
    }))
  ]
}

/** A request of the set: fixed, or made from the service's earlier answers (an ETag, a `next` link). */
export type SetRequest = WireRequest | ((answers: ReadonlyMap<string, Answer>) => WireRequest)

interface Options { key?: KeyName | null, headers?: Array<[string, string]>, body?: string, json?: boolean, host?: string | null }

/** A request named `name`, with the bearer `key` (null: none; default the environment's write key) and the usual Host. */
export function request (name: string, method: string, path: string, options: Options = {}): WireRequest {
  const { key = 'writeEnv', body, json = body !== undefined, host = HOST } = options
  const headers: Array<[string, string]> = [
    ...(host === null ? [] : [['Host', host] as [string, string]]),
    ...(key === null ? [] : [['Authorization', `Bearer ${KEYS[key]}`] as [string, string]]),
    ...(json ? [['Content-Type', 'application/json'] as [string, string]] : []),
    ...(options.headers ?? [])
  ]
  return { name, method, path, headers, body, key: key ?? undefined }
}

const header = (answers: ReadonlyMap<string, Answer>, name: string, field: string): string => {
  const value = answers.get(name)?.headers.find(([key]) => key.toLowerCase() === field)?.[1]
  if (value === undefined) throw new Error(`the service's answer to "${name}" has no ${field}`)
  return value
}
/** The path and query of an answer's `next` link. */
const nextOf = (answers: ReadonlyMap<string, Answer>, name: string): string => new URL(/^<([^>]+)>/.exec(header(answers, name, 'link'))?.[1] ?? '').href.replace(/^https:\/\/[^/]+/, '')
const create = (name: string, body: string, options: Options = {}): WireRequest => request(name, 'POST', '/v1/pets', { body, ...options })

/** The set, in order. `burst` sends one more than the per-key quota with its own key; its last answer is a 429. */
export function requestSet (perKeyQuota: number): SetRequest[] {
  return [
    request('healthz', 'GET', '/healthz', { key: null }),
    // getPet
    request('getPet', 'GET', '/v1/pets/1'),
    (answers) => request('getPet 304', 'GET', '/v1/pets/1', { headers: [['If-None-Match', header(answers, 'getPet', 'etag')]] }),
    (answers) => request('getPet 304, weak', 'GET', '/v1/pets/1', { headers: [['If-None-Match', `W/${header(answers, 'getPet', 'etag')}`]] }),
    (answers) => request('getPet 304, in a list', 'GET', '/v1/pets/1', { key: 'readStored', headers: [['If-None-Match', `"other", ${header(answers, 'getPet', 'etag')}`]] }),
    request('getPet 304, any', 'GET', '/v1/pets/1', { headers: [['If-None-Match', '*']] }),
    request('getPet, tag not matching', 'GET', '/v1/pets/1', { headers: [['If-None-Match', '"not-it"']] }),
    request('getPet, tag too long', 'GET', '/v1/pets/1', { headers: [['If-None-Match', `"${'x'.repeat(4100)}"`]] }),
    request('getPet, unicode name', 'GET', '/v1/pets/2', { key: 'readEnv' }),
    request('getPet, int64 max category', 'GET', '/v1/pets/3', { key: 'writeStored' }),
    request('getPet, int64 min category', 'GET', '/v1/pets/4'),
    request('getPet, category beyond 2^53', 'GET', '/v1/pets/5', { key: 'readStored' }),
    request('getPet, HEAD', 'HEAD', '/v1/pets/1'),
    (answers) => request('getPet, HEAD 304', 'HEAD', '/v1/pets/1', { headers: [['If-None-Match', header(answers, 'getPet', 'etag')]] }),
    request('getPet, no such pet', 'GET', '/v1/pets/999999'),
    request('getPet, largest id', 'GET', `/v1/pets/${BIG}`),
    request('getPet, id beyond int64', 'GET', '/v1/pets/9223372036854775808'),
    request('getPet, id 0', 'GET', '/v1/pets/0', { key: 'readEnv' }),
    request('getPet, negative id', 'GET', '/v1/pets/-3'),
    request('getPet, id not a number', 'GET', '/v1/pets/abc'),
    request('getPet, id 1.0', 'GET', '/v1/pets/1.0'),
    request('getPet, query parameter', 'GET', '/v1/pets/1?verbose=1'),
    request('getPet, no key', 'GET', '/v1/pets/1', { key: null }),
    request('getPet, request id kept', 'GET', '/v1/pets/1', { headers: [['X-Request-Id', 'trace-42/span:7']] }),
    request('getPet, request id refused', 'GET', '/v1/pets/1', { headers: [['X-Request-Id', 'not a plausible id']] }),
    request('getPet, staging host', 'GET', '/v1/pets/1', { host: 'staging.petstore.test' }),
    request('getPet, trailing slash', 'GET', '/v1/pets/'),
    request('getPet, DELETE', 'DELETE', '/v1/pets/1'),
    // listPets
    request('listPets', 'GET', '/v1/pets', { key: 'writeStored' }),
    (answers) => request('listPets, next page', 'GET', nextOf(answers, 'listPets'), { key: 'writeStored' }),
    request('listPets, available', 'GET', '/v1/pets?limit=5&status=available', { key: 'readStored' }),
    (answers) => request('listPets, available, next page', 'GET', nextOf(answers, 'listPets, available'), { key: 'readStored' }),
    (answers) => request('listPets, cursor of another filter', 'GET', nextOf(answers, 'listPets, available').replace('status=available', 'status=sold')),
    (answers) => request('listPets, cursor without its filter', 'GET', nextOf(answers, 'listPets, available').replace('status=available&', '')),
    (answers) => request('listPets, altered cursor', 'GET', nextOf(answers, 'listPets, available').replace(/cursor=(.)/, (_, first: string) => `cursor=${first === 'A' ? 'B' : 'A'}`)),
    request('listPets, garbled cursor', 'GET', '/v1/pets?cursor=garbage'),
    request('listPets, empty cursor', 'GET', '/v1/pets?cursor='),
    request('listPets, all of them', 'GET', '/v1/pets?limit=100'),
    request('listPets, sold', 'GET', '/v1/pets?status=sold&limit=3', { key: 'readEnv' }),
    request('listPets, limit 0', 'GET', '/v1/pets?limit=0'),
    request('listPets, limit 101', 'GET', '/v1/pets?limit=101'),
    request('listPets, limit abc', 'GET', '/v1/pets?limit=abc'),
    request('listPets, limit 1.5', 'GET', '/v1/pets?limit=1.5'),
    request('listPets, limit +2', 'GET', '/v1/pets?limit=%2B2'),
    request('listPets, limit huge', 'GET', '/v1/pets?limit=99999999999999999999'),
    request('listPets, limit 007', 'GET', '/v1/pets?limit=007'),
    request('listPets, limit twice', 'GET', '/v1/pets?limit=1&limit=2'),
    request('listPets, unknown status', 'GET', '/v1/pets?status=lost'),
    request('listPets, unknown parameter', 'GET', '/v1/pets?color=red', { key: 'readStored' }),
    request('listPets, status[]', 'GET', '/v1/pets?status[]=sold'),
    request('listPets, a key in the query', 'GET', `/v1/pets?access_token=petstore_${'a'.repeat(43)}`),
    request('listPets, staging host', 'GET', '/v1/pets?limit=2', { host: 'staging.petstore.test' }),
    request('listPets, HEAD', 'HEAD', '/v1/pets?limit=2', { key: 'readStored' }),
    request('listPets, PUT', 'PUT', '/v1/pets', { body: '{}' }),
    request('listPets, no Host', 'GET', '/v1/pets?limit=1', { host: null }),
    request('listPets, two Hosts', 'GET', '/v1/pets?limit=1', { headers: [['Host', 'other.petstore.test']] }),
    // getInventory
    request('getInventory', 'GET', '/v1/store/inventory', { key: 'readStored' }),
    request('getInventory, query parameter', 'GET', '/v1/store/inventory?status=sold'),
    request('getInventory, POST', 'POST', '/v1/store/inventory', { key: 'readEnv' }),
    // createPet
    create('createPet', '{"name":"Nova","categoryId":7}'),
    create('createPet, sold', '{"name":"Sold one","categoryId":8,"status":"sold"}', { key: 'writeStored' }),
    create('createPet, int64 max', `{"name":"Max","categoryId":${BIG}}`),
    create('createPet, int64 min', `{"name":"Min","categoryId":${SMALL},"status":"pending"}`),
    create('createPet, 1.0', '{"name":"One","categoryId":1.0}'),
    create('createPet, 1e2', '{"name":"Hundred","categoryId":1e2}', { key: 'writeStored' }),
    create('createPet, 1e18', '{"name":"Exa","categoryId":1e18}'),
    create('createPet, unicode name', '{"name":"Zoë \\"the\\" 🐈 \\u00e9","categoryId":3}'),
    create('createPet, name of 100', `{"name":"${'n'.repeat(100)}","categoryId":3}`),
    create('createPet, beyond int64', '{"name":"Over","categoryId":9223372036854775808}'),
    create('createPet, below int64', '{"name":"Under","categoryId":-9223372036854775809}'),
    create('createPet, 1e400', '{"name":"Huge","categoryId":1e400}'),
    create('createPet, 1.5', '{"name":"Half","categoryId":1.5}'),
    create('createPet, rounded fraction', '{"name":"Rounded","categoryId":1.0000000000000001}'),
    create('createPet, category as text', '{"name":"Text","categoryId":"5"}'),
    create('createPet, category null', '{"name":"Null","categoryId":null}'),
    create('createPet, no name', '{"categoryId":1}'),
    create('createPet, empty name', '{"name":"","categoryId":1}'),
    create('createPet, blank name', '{"name":" \\u00a0\\u200b ","categoryId":1}'),
    create('createPet, name of 101', `{"name":"${'n'.repeat(101)}","categoryId":1}`),
    create('createPet, bidi control in name', '{"name":"evil\\u202egnp","categoryId":1}'),
    create('createPet, unknown status', '{"name":"Lost","categoryId":1,"status":"lost"}'),
    create('createPet, id', '{"id":1,"name":"Dup","categoryId":1}'),
    create('createPet, unknown field', '{"name":"Color","categoryId":1,"color":"red"}'),
    create('createPet, __proto__', '{"name":"Proto","categoryId":1,"__proto__":{"admin":true}}'),
    create('createPet, array', '[]'),
    create('createPet, malformed JSON', '{"name":"Broken",'),
    create('createPet, empty body', ''),
    create('createPet, too large', `{"name":"Large","categoryId":1,"pad":"${'x'.repeat(17_000)}"}`),
    request('createPet, query parameter', 'POST', '/v1/pets?dryRun=1', { key: 'writeStored', body: '{"name":"Query","categoryId":1}' }),
    request('createPet, text/plain', 'POST', '/v1/pets', { body: '{"name":"Plain","categoryId":1}', json: false, headers: [['Content-Type', 'text/plain']] }),
    request('createPet, latin1', 'POST', '/v1/pets', { body: '{"name":"Latin","categoryId":1}', json: false, headers: [['Content-Type', 'application/json; charset=latin1']] }),
    create('createPet, gzip', '{"name":"Zipped","categoryId":1}', { headers: [['Content-Encoding', 'gzip']] }),
    request('createPet, no body', 'POST', '/v1/pets', { json: false }),
    create('createPet, read key', '{"name":"Reader","categoryId":1}', { key: 'readStored' }),
    create('createPet, read key from the environment', '{"name":"Reader","categoryId":1}', { key: 'readEnv' }),
    create('createPet, no key', '{"name":"Anonymous","categoryId":1}', { key: null }),
    request('getPet of a created pet', 'GET', '/v1/pets/33', { key: 'writeStored' }),
    request('listPets after the creates', 'GET', '/v1/pets?limit=4&status=pending'),
    request('getInventory after the creates', 'GET', '/v1/store/inventory'),
    // authentication, and the failed-authentication limit (AUTH_FAILURE_LIMIT=3)
    request('unknown path', 'GET', '/v1/nowhere'),
    request('unknown path, no key', 'GET', '/v1/nowhere', { key: null }),
    request('outside /v1', 'GET', '/nowhere', { key: null }),
    request('lower-case scheme', 'GET', '/v1/store/inventory', { key: null, headers: [['Authorization', `bearer  ${KEYS.writeEnv}  `]] }),
    request('revoked key', 'GET', '/v1/pets/1', { key: 'revoked' }),
    request('Basic scheme', 'GET', '/v1/store/inventory', { key: null, headers: [['Authorization', 'Basic dXNlcjpwYXNz']] }),
    request('unknown key', 'GET', '/v1/store/inventory', { key: null, headers: [['Authorization', 'Bearer no-such-key-0123456789']] }),
    // a blank header counts as a failed authentication, unlike none: the fourth is past the limit
    request('blank Authorization', 'GET', '/v1/store/inventory', { key: null, headers: [['Authorization', '']] }),
    request('unknown key past the limit', 'GET', '/v1/store/inventory', { key: null, headers: [['Authorization', 'Bearer no-such-key-0123456789']] }),
    request('valid key past the limit', 'GET', '/v1/store/inventory', { key: 'writeStored' }),
    // the per-key limit
    ...Array.from({ length: perKeyQuota + 1 }, (_, i) => request(`burst ${i + 1}`, 'GET', '/v1/pets/1', { key: 'burst' }))
  ]
}

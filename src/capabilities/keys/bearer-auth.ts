import type { FastifyInstance, FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify'
import { LRUCache } from 'lru-cache'
import { ApiError } from '../../infra/errors/catalogue.js'
import { BEARER_CHALLENGE } from '../../infra/credentials/credentials.js'
import type { ApiKeyRecord, KeyStore } from './store/key-store.js'
import { digestApiKey, findDigestInConstantTime, hashApiKey, parseBearer } from './api-keys.js'
import type { ApiKeyRole } from './roles.js'

/** The key a request was authenticated with. */
export interface AuthenticatedKey {
  /** Store id of the key; null for a key from `PETSTORE_API_KEYS`. */
  id: number | null
  name: string
  /** What the key may do; logs and metrics name it beside the key's name. */
  role: ApiKeyRole
  /** Stable and unique per key: what rate limits and idempotency records are kept under. */
  scope: string
}

/** The limit on failed authentications, told of each request whose key fails. */
export interface FailedAuthGuard {
  /** Counts one failed authentication of the request's address; rejects (with a 429) when the address is over its limit. */
  recordFailedAuth (request: FastifyRequest, reply: FastifyReply): Promise<void>
}

declare module 'fastify' {
  interface FastifyRequest {
    apiKey: AuthenticatedKey | null
  }
}

export interface BearerAuthOptions {
  /** Where keys created by `npx petstore keys create` are found. */
  store: KeyStore
  /** Keys from the environment, accepted besides the store's: `PETSTORE_API_KEYS` (write). */
  environmentKeys: readonly string[]
  /** Keys from the environment with the read role (`PETSTORE_READ_API_KEYS`). */
  readEnvironmentKeys?: readonly string[]
  /** Keys from the environment with the admin role (`PETSTORE_ADMIN_API_KEYS`). */
  adminEnvironmentKeys?: readonly string[]
  /** How long a found key is reused without asking the store (0: always ask); bounds how late a revocation bites. */
  cacheMs: number
  guard: FailedAuthGuard
}

// bounds memory whatever the number of keys; each entry is a hash and a small record
const MAX_CACHED_KEYS = 10_000

// writing last_used_at on every request would turn each read into a write
const LAST_USED_RESOLUTION_MS = 60_000

const CHALLENGE = BEARER_CHALLENGE
const MESSAGES = {
  missing: 'Missing API key: send "Authorization: Bearer <API key>".',
  malformed: 'Malformed Authorization header: expected "Bearer <API key>".',
  unknown: 'Unknown or revoked API key.'
} as const

/**
 * Adds an onRequest hook to the calling context: every route registered in it
 * (and its 404 handler) answers 401 before anything else unless the request
 * carries a valid bearer key. Register it inside an encapsulated plugin.
 */
export function addBearerAuth (app: FastifyInstance, options: BearerAuthOptions): void {
  // each key from the environment with the one record every request it authenticates gets; a prefix of
  // the hash tells environment keys apart (in limits, idempotency) without revealing anything usable
  const environmentKey = (key: string, role: ApiKeyRole): { digest: Buffer, key: AuthenticatedKey } => ({
    digest: digestApiKey(key),
    key: Object.freeze({ id: null, name: 'environment', role, scope: `env:${hashApiKey(key).slice(0, 16)}` })
  })
  // the configuration gives each key one role (config.ts refuses a key in two lists)
  const environmentKeys = [
    ...(options.readEnvironmentKeys ?? []).map((key) => environmentKey(key, 'read')),
    ...options.environmentKeys.map((key) => environmentKey(key, 'write')),
    ...(options.adminEnvironmentKeys ?? []).map((key) => environmentKey(key, 'admin'))
  ]
  const lastTouched = new Map<number, number>()
  // only keys that were found: a key created a moment ago must work at once
  const found = options.cacheMs > 0
    ? new LRUCache<string, ApiKeyRecord>({ max: MAX_CACHED_KEYS, ttl: options.cacheMs, ttlResolution: 0, perf: app.clock })
    : undefined

  // with the cache on, the look-up in flight for a hash: a burst of a key's first requests (a fresh instance, an
  // expired entry) asks the store once, not once each, which on PostgreSQL queued every request behind the pool
  const lookingUp = new Map<string, Promise<ApiKeyRecord | undefined>>()

  async function lookUp (hash: string): Promise<ApiKeyRecord | undefined> {
    if (found === undefined) return await options.store.findActiveApiKeyByHash(hash)
    const cached = found.get(hash)
    if (cached !== undefined) return cached
    let pending = lookingUp.get(hash)
    if (pending === undefined) {
      pending = lookUpAndCache(found, hash).finally(() => { lookingUp.delete(hash) })
      lookingUp.set(hash, pending)
    }
    return await pending
  }

  async function lookUpAndCache (cache: LRUCache<string, ApiKeyRecord>, hash: string): Promise<ApiKeyRecord | undefined> {
    // the entry ages from before the look-up: a revocation committed while it ran still bites in time, and so do
    // the requests that joined it (no later than a cached answer would)
    const start = app.clock.now()
    const record = await options.store.findActiveApiKeyByHash(hash)
    if (record !== undefined) cache.set(hash, record, { start })
    return record
  }

  /** The request's key: at once for a key from the environment, else once the store has answered. */
  function authenticate (request: FastifyRequest): AuthenticatedKey | Promise<AuthenticatedKey> {
    const bearer = parseBearer(request.headers.authorization)
    if (!bearer.ok) {
      const error = bearer.reason === 'missing' ? CHALLENGE : `${CHALLENGE}, error="invalid_request"`
      throw new ApiError('unauthorized', MESSAGES[bearer.reason], { 'www-authenticate': error })
    }
    const hash = hashApiKey(bearer.token)
    // every key from the environment is compared, so the time does not tell which one (or which role) holds it
    const environment = findDigestInConstantTime(environmentKeys, Buffer.from(hash, 'hex'))
    if (environment !== undefined) return environment.key
    return authenticateStored(request, hash)
  }

  async function authenticateStored (request: FastifyRequest, hash: string): Promise<AuthenticatedKey> {
    // the lookup is by hash: timing can only reveal hash prefixes, which do not help find a key
    const record = await lookUp(hash)
    if (record === undefined) {
      throw new ApiError('unauthorized', MESSAGES.unknown, { 'www-authenticate': `${CHALLENGE}, error="invalid_token"` })
    }
    recordUse(request, record.id)
    return { id: record.id, name: record.name, role: record.role, scope: `key:${record.id}` }
  }

  function recordUse (request: FastifyRequest, id: number): void {
    const now = app.clock.now()
    if (now - (lastTouched.get(id) ?? 0) < LAST_USED_RESOLUTION_MS) return
    lastTouched.set(id, now)
    // after the current request's work: bookkeeping must not delay the answer
    setImmediate(() => {
      options.store.touchApiKey(id, new Date(now)).catch((error: unknown) => {
        request.log.warn({ err: error }, 'could not record API key use')
      })
    })
  }

  app.decorateRequest('apiKey', null)
  function refuse (request: FastifyRequest, reply: FastifyReply, error: unknown, done: HookHandlerDoneFunction): void {
    // a request without any key guesses nothing: it is neither counted nor refused
    if (error instanceof ApiError && error.code === 'unauthorized' && request.headers.authorization !== undefined) {
      options.guard.recordFailedAuth(request, reply).then(() => { done(error) }, done)
    } else {
      done(error as Error)
    }
  }

  // a callback rather than a promise: a key from the environment is settled within the hook
  app.addHook('onRequest', (request, reply, done) => {
    // a valid key is served whatever its address did: behind a NAT or a balancer one bad client
    // must not lock everyone out, and with 256-bit keys a confirmed guess is not a risk worth that
    let key: AuthenticatedKey | Promise<AuthenticatedKey>
    try {
      key = authenticate(request)
    } catch (error) {
      refuse(request, reply, error, done)
      return
    }
    if (!(key instanceof Promise)) {
      request.apiKey = key
      done()
      return
    }
    key.then((found) => {
      request.apiKey = found
      done()
    }, (error: unknown) => { refuse(request, reply, error, done) })
  })
}

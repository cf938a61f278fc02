import { endpoint, expectShape, isObject } from './answers.js'
import { findLink } from './link-header.js'
import type { ClientSettings, RequestOptions } from './options.js'
import { send, type ApiAnswer } from './transport.js'
import type {
  CreatedWebhookEndpoint, Int64, ListWebhookAttemptsQuery, ListWebhookEndpointsQuery, NewWebhookEndpoint, RotatedWebhookSecret, TaggedWebhookEndpoint,
  WebhookAttemptPage, WebhookEndpoint, WebhookEndpointPage, WebhookEndpointPatch, WebhookRecovered, WebhookRecovery, WebhookResent, WebhookTestResult
} from './types.js'

/** Options of `webhookEndpoints.create`. */
export interface CreateWebhookEndpointOptions extends RequestOptions {
  /** Identifies this registration across retries (default: a new random UUID per call); within 24 hours, the same key and body give the first answer again. */
  idempotencyKey?: string
}

/** Options of `webhookEndpoints.update`. */
export interface UpdateWebhookEndpointOptions extends RequestOptions {
  /** Makes the change conditional (`If-Match`): an `etag` from `get`, `create` or `update` (or `*`); the endpoint's settings must not have changed since, else 412. */
  ifMatch?: string
}

/**
 * The webhook endpoints (beta; admin keys only, others fail with 403 `insufficient_scope`): where the events are
 * delivered, and their deliveries. Every call is retried like any other; a retried `delete` whose first attempt
 * went through fails with 404 `webhook_endpoint_not_found`.
 */
export interface WebhookEndpointOperations {
  /**
   * Registers an endpoint; only events recorded from now on are sent to it. The answer carries what its receiver
   * verifies requests with, once: `secret` (`hmac-sha256`) or `publicKey` (`ed25519`). Always sends an
   * `Idempotency-Key` and reuses it on every retry, so a retried registration never registers twice.
   */
  create (endpoint: NewWebhookEndpoint, options?: CreateWebhookEndpointOptions): Promise<{ endpoint: CreatedWebhookEndpoint, etag: string }>
  /** One page of endpoints in `id` order (`limit` 1–100, default 20), each with its health; never a secret. */
  list (query?: ListWebhookEndpointsQuery, options?: RequestOptions): Promise<WebhookEndpointPage>
  /** Every endpoint, page after page. */
  all (options?: RequestOptions): AsyncGenerator<WebhookEndpoint, void, undefined>
  /** One endpoint with its health and its `etag` (404 `webhook_endpoint_not_found` when none has the id). */
  get (endpointId: Int64, options?: RequestOptions): Promise<TaggedWebhookEndpoint>
  /** Changes the fields `patch` names (`disabled`, `events`, `url`, `rateLimit`, …), keeping the secret and the queue; answers the endpoint and its `etag`. */
  update (endpointId: Int64, patch: WebhookEndpointPatch, options?: UpdateWebhookEndpointOptions): Promise<TaggedWebhookEndpoint>
  /** Deletes the endpoint, its waiting deliveries and its attempts. */
  delete (endpointId: Int64, options?: RequestOptions): Promise<void>
  /** A new secret (or ed25519 key pair), answered once; the old one keeps signing beside it for 24 hours. */
  rotateSecret (endpointId: Int64, options?: RequestOptions): Promise<RotatedWebhookSecret>
  /** Sends one signed `webhook.test` message now and says what came of it (delivered or not: never a failure of the call). */
  test (endpointId: Int64, options?: RequestOptions): Promise<WebhookTestResult>
  /** One page of the endpoint's delivery attempts, newest first, optionally only those that `failed` or `succeeded`. */
  listAttempts (endpointId: Int64, query?: ListWebhookAttemptsQuery, options?: RequestOptions): Promise<WebhookAttemptPage>
  /** Puts the event in line for the endpoint again, due now (409 `webhook_endpoint_disabled` for a disabled endpoint, 422 `event_not_found`). */
  resend (endpointId: Int64, eventId: Int64, options?: RequestOptions): Promise<WebhookResent>
  /** Puts back in line every event the endpoint failed or gave up on in the window, not delivered since; they are sent in event-id order, each once. */
  recover (endpointId: Int64, window: WebhookRecovery, options?: RequestOptions): Promise<WebhookRecovered>
}

/** The webhook endpoint operations over `settings`' transport. */
export function webhookEndpointOperations (settings: ClientSettings): WebhookEndpointOperations {
  const endpointUrl = (id: Int64, action = ''): URL => endpoint(settings, `/webhook-endpoints/${encodeURIComponent(String(id))}${action}`)
  const cursorOf = (answer: ApiAnswer, url: URL, operation: 'listWebhookEndpoints' | 'listWebhookAttempts'): string | undefined => {
    const next = findLink(answer.response.headers.get('link'), 'next', answer.response.url || url.href)
    if (next === undefined) return undefined
    const cursor = next.searchParams.get('cursor')
    return expectShape(cursor !== null && cursor !== '', cursor as string, operation, answer)
  }
  const tagged = (answer: ApiAnswer, operation: 'getWebhookEndpoint' | 'updateWebhookEndpoint'): TaggedWebhookEndpoint => {
    const etag = answer.response.headers.get('etag')
    return expectShape(isObject(answer.body) && etag !== null, { endpoint: answer.body as WebhookEndpoint, etag: etag as string }, operation, answer)
  }
  const object = <T>(answer: ApiAnswer, operation: Parameters<typeof expectShape>[2]): T => expectShape(isObject(answer.body), answer.body as T, operation, answer)

  const list = async (query: ListWebhookEndpointsQuery = {}, { signal }: RequestOptions = {}): Promise<WebhookEndpointPage> => {
    const url = endpoint(settings, '/webhook-endpoints')
    for (const name of ['limit', 'cursor'] as const) if (query[name] !== undefined) url.searchParams.set(name, String(query[name]))
    const answer = await send(settings, { operation: 'listWebhookEndpoints', method: 'GET', url, signal })
    const endpoints = expectShape(Array.isArray(answer.body), answer.body as WebhookEndpoint[], 'listWebhookEndpoints', answer)
    const nextCursor = cursorOf(answer, url, 'listWebhookEndpoints')
    return nextCursor === undefined ? { endpoints } : { endpoints, nextCursor }
  }

  return {
    list,

    async create (body, { idempotencyKey = globalThis.crypto.randomUUID(), signal } = {}) {
      const answer = await send(settings, {
        operation: 'createWebhookEndpoint',
        method: 'POST',
        url: endpoint(settings, '/webhook-endpoints'),
        body,
        headers: { 'idempotency-key': idempotencyKey },
        signal
      })
      const etag = answer.response.headers.get('etag')
      return expectShape(isObject(answer.body) && etag !== null, { endpoint: answer.body as CreatedWebhookEndpoint, etag: etag as string }, 'createWebhookEndpoint', answer)
    },

    async * all (options = {}) {
      let cursor: string | undefined
      do {
        const page: WebhookEndpointPage = await list(cursor === undefined ? {} : { cursor }, options)
        yield * page.endpoints
        cursor = page.nextCursor
      } while (cursor !== undefined)
    },

    async get (endpointId, { signal } = {}) {
      return tagged(await send(settings, { operation: 'getWebhookEndpoint', method: 'GET', url: endpointUrl(endpointId), signal }), 'getWebhookEndpoint')
    },

    async update (endpointId, patch, { ifMatch, signal } = {}) {
      const answer = await send(settings, {
        operation: 'updateWebhookEndpoint',
        method: 'PATCH',
        url: endpointUrl(endpointId),
        body: patch,
        contentType: 'application/merge-patch+json',
        headers: ifMatch === undefined ? {} : { 'if-match': ifMatch },
        signal
      })
      return tagged(answer, 'updateWebhookEndpoint')
    },

    async delete (endpointId, { signal } = {}) {
      await send(settings, { operation: 'deleteWebhookEndpoint', method: 'DELETE', url: endpointUrl(endpointId), signal })
    },

    async rotateSecret (endpointId, { signal } = {}) {
      const answer = await send(settings, { operation: 'rotateWebhookEndpointSecret', method: 'POST', url: endpointUrl(endpointId, '/rotate-secret'), signal })
      return object<RotatedWebhookSecret>(answer, 'rotateWebhookEndpointSecret')
    },

    async test (endpointId, { signal } = {}) {
      return object<WebhookTestResult>(await send(settings, { operation: 'testWebhookEndpoint', method: 'POST', url: endpointUrl(endpointId, '/test'), signal }), 'testWebhookEndpoint')
    },

    async listAttempts (endpointId, query = {}, { signal } = {}) {
      const url = endpointUrl(endpointId, '/attempts')
      for (const name of ['limit', 'status', 'cursor'] as const) if (query[name] !== undefined) url.searchParams.set(name, String(query[name]))
      const answer = await send(settings, { operation: 'listWebhookAttempts', method: 'GET', url, signal })
      const attempts = expectShape(Array.isArray(answer.body), answer.body as WebhookAttemptPage['attempts'], 'listWebhookAttempts', answer)
      const nextCursor = cursorOf(answer, url, 'listWebhookAttempts')
      return nextCursor === undefined ? { attempts } : { attempts, nextCursor }
    },

    async resend (endpointId, eventId, { signal } = {}) {
      const answer = await send(settings, { operation: 'resendWebhookEvent', method: 'POST', url: endpointUrl(endpointId, '/resend'), body: { eventId }, signal })
      return object<WebhookResent>(answer, 'resendWebhookEvent')
    },

    async recover (endpointId, window, { signal } = {}) {
      const answer = await send(settings, { operation: 'recoverWebhookDeliveries', method: 'POST', url: endpointUrl(endpointId, '/recover'), body: window, signal })
      return object<WebhookRecovered>(answer, 'recoverWebhookDeliveries')
    }
  }
}

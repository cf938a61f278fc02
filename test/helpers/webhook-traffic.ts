// The contract traffic of /v1/webhook-endpoints (test/contract/prism-proxy.test.ts): each operation and each status a
// request can provoke, in order (a case's state stays for the ones after it). Endpoint 1 (hmac, rate-limited) and 2
// (ed25519, registered disabled) are registered first; their URLs are a closed port on 127.0.0.1, so nothing waits on a receiver.

type Headers = Record<string, string>

/** What the cases read of the traffic's context. */
export interface WebhookTrafficContext {
  /** A valid `write` key: below what endpoint operations need. */
  auth: { authorization: string }
  readKey: { authorization: string }
  adminKey: { authorization: string }
  clock: { now: () => number }
}

/** A case of the traffic, as prism-proxy.test.ts runs it. */
export interface WebhookTrafficCase {
  operation: string
  status: number
  what: string
  request: (context: WebhookTrafficContext) => { method: string, path: string, headers?: Headers, body?: string }
}

const JSON_BODY = { 'content-type': 'application/json' }
const MERGE_PATCH_BODY = { 'content-type': 'application/merge-patch+json' }
const HOOK = JSON.stringify({ url: 'https://127.0.0.1:9/hooks', events: ['pet.created'], rateLimit: 10, description: 'traffic' })
const SIGNED = JSON.stringify({ url: 'https://127.0.0.1:9/signed', events: ['pet.created', 'order.created'], signing: 'ed25519', disabled: true })
const BIG = 'x'.repeat(20_000)

type Call = (method: string, path: string, body?: string, headers?: Headers) => WebhookTrafficCase['request']
const as = (key: 'auth' | 'readKey' | 'adminKey'): Call => (method, path, body, headers = {}) => (context) =>
  ({ method, path, headers: { ...context[key], ...(body === undefined ? {} : method === 'PATCH' ? MERGE_PATCH_BODY : JSON_BODY), ...headers }, ...(body === undefined ? {} : { body }) })
const admin = as('adminKey')
const write = as('auth')
const read = as('readKey')
const hourAgo = ({ clock }: WebhookTrafficContext): string => new Date(clock.now() - 3_600_000).toISOString()

/** The cases, after the traffic has created pets (event 1 is a `pet.created`). */
export const WEBHOOK_TRAFFIC: readonly WebhookTrafficCase[] = [
  { operation: 'createWebhookEndpoint', status: 201, what: 'an endpoint, with an Idempotency-Key', request: admin('POST', '/webhook-endpoints', HOOK, { 'idempotency-key': 'hook-1' }) },
  { operation: 'createWebhookEndpoint', status: 201, what: 'a replay of it (Idempotent-Replayed)', request: admin('POST', '/webhook-endpoints', HOOK, { 'idempotency-key': 'hook-1' }) },
  { operation: 'createWebhookEndpoint', status: 201, what: 'an ed25519 endpoint, registered disabled', request: admin('POST', '/webhook-endpoints', SIGNED) },
  { operation: 'createWebhookEndpoint', status: 400, what: 'no event type', request: admin('POST', '/webhook-endpoints', JSON.stringify({ url: 'https://127.0.0.1:9/x', events: [] })) },
  { operation: 'createWebhookEndpoint', status: 400, what: 'a URL the address rules refuse', request: admin('POST', '/webhook-endpoints', JSON.stringify({ url: 'ftp://127.0.0.1/x', events: ['pet.created'] })) },
  { operation: 'createWebhookEndpoint', status: 403, what: 'a write key', request: write('POST', '/webhook-endpoints', HOOK) },
  { operation: 'createWebhookEndpoint', status: 409, what: 'a URL registered already', request: admin('POST', '/webhook-endpoints', HOOK) },
  { operation: 'createWebhookEndpoint', status: 413, what: 'a body over 16 KiB', request: admin('POST', '/webhook-endpoints', JSON.stringify({ url: 'https://127.0.0.1:9/x', events: ['pet.created'], description: BIG })) },
  { operation: 'createWebhookEndpoint', status: 415, what: 'a body that is not JSON', request: admin('POST', '/webhook-endpoints', 'url', { 'content-type': 'text/plain' }) },
  { operation: 'createWebhookEndpoint', status: 422, what: 'an Idempotency-Key reused with another body', request: admin('POST', '/webhook-endpoints', SIGNED, { 'idempotency-key': 'hook-1' }) },
  { operation: 'listWebhookEndpoints', status: 200, what: 'a first page with a next link', request: admin('GET', '/webhook-endpoints?limit=1') },
  { operation: 'listWebhookEndpoints', status: 304, what: 'a page that still matches If-None-Match', request: admin('GET', '/webhook-endpoints', undefined, { 'if-none-match': '*' }) },
  { operation: 'listWebhookEndpoints', status: 400, what: 'a limit out of range', request: admin('GET', '/webhook-endpoints?limit=0') },
  { operation: 'listWebhookEndpoints', status: 403, what: 'a read key', request: read('GET', '/webhook-endpoints') },
  { operation: 'getWebhookEndpoint', status: 200, what: 'an endpoint, with its ETag', request: admin('GET', '/webhook-endpoints/1') },
  { operation: 'getWebhookEndpoint', status: 200, what: 'an ed25519 endpoint, with its public key', request: admin('GET', '/webhook-endpoints/2') },
  { operation: 'getWebhookEndpoint', status: 304, what: 'an endpoint that still matches If-None-Match', request: admin('GET', '/webhook-endpoints/1', undefined, { 'if-none-match': '*' }) },
  { operation: 'getWebhookEndpoint', status: 400, what: 'an id that is not an integer', request: admin('GET', '/webhook-endpoints/abc') },
  { operation: 'getWebhookEndpoint', status: 403, what: 'a write key', request: write('GET', '/webhook-endpoints/1') },
  { operation: 'getWebhookEndpoint', status: 404, what: 'an id no endpoint has', request: admin('GET', '/webhook-endpoints/999') },
  { operation: 'updateWebhookEndpoint', status: 200, what: 'a description and a rate limit removed', request: admin('PATCH', '/webhook-endpoints/1', '{"description":null,"rateLimit":null}') },
  { operation: 'updateWebhookEndpoint', status: 400, what: 'no event type', request: admin('PATCH', '/webhook-endpoints/1', '{"events":[]}') },
  { operation: 'updateWebhookEndpoint', status: 403, what: 'a read key', request: read('PATCH', '/webhook-endpoints/1', '{"disabled":true}') },
  { operation: 'updateWebhookEndpoint', status: 404, what: 'an id no endpoint has', request: admin('PATCH', '/webhook-endpoints/999', '{"disabled":true}') },
  { operation: 'updateWebhookEndpoint', status: 409, what: 'the URL of another endpoint', request: admin('PATCH', '/webhook-endpoints/1', '{"url":"https://127.0.0.1:9/signed"}') },
  { operation: 'updateWebhookEndpoint', status: 412, what: 'an If-Match that no longer holds', request: admin('PATCH', '/webhook-endpoints/1', '{"name":"x"}', { 'if-match': '"stale"' }) },
  { operation: 'updateWebhookEndpoint', status: 413, what: 'a body over 16 KiB', request: admin('PATCH', '/webhook-endpoints/1', JSON.stringify({ description: BIG })) },
  { operation: 'updateWebhookEndpoint', status: 415, what: 'a body that is not JSON', request: admin('PATCH', '/webhook-endpoints/1', 'x', { 'content-type': 'text/plain' }) },
  { operation: 'rotateWebhookEndpointSecret', status: 200, what: 'a new secret', request: admin('POST', '/webhook-endpoints/1/rotate-secret') },
  { operation: 'rotateWebhookEndpointSecret', status: 200, what: 'a new ed25519 key pair', request: admin('POST', '/webhook-endpoints/2/rotate-secret') },
  { operation: 'rotateWebhookEndpointSecret', status: 400, what: 'an id that is not an integer', request: admin('POST', '/webhook-endpoints/abc/rotate-secret') },
  { operation: 'rotateWebhookEndpointSecret', status: 403, what: 'a write key', request: write('POST', '/webhook-endpoints/1/rotate-secret') },
  { operation: 'rotateWebhookEndpointSecret', status: 404, what: 'an id no endpoint has', request: admin('POST', '/webhook-endpoints/999/rotate-secret') },
  { operation: 'rotateWebhookEndpointSecret', status: 413, what: 'a body it does not take, over 16 KiB', request: admin('POST', '/webhook-endpoints/1/rotate-secret', JSON.stringify({ pad: BIG })) },
  { operation: 'rotateWebhookEndpointSecret', status: 415, what: 'a body it does not take, not JSON', request: admin('POST', '/webhook-endpoints/1/rotate-secret', 'x', { 'content-type': 'text/plain' }) },
  { operation: 'testWebhookEndpoint', status: 200, what: 'a test message, not delivered (the port is closed)', request: admin('POST', '/webhook-endpoints/1/test') },
  { operation: 'testWebhookEndpoint', status: 400, what: 'an id that is not an integer', request: admin('POST', '/webhook-endpoints/abc/test') },
  { operation: 'testWebhookEndpoint', status: 403, what: 'a write key', request: write('POST', '/webhook-endpoints/1/test') },
  { operation: 'testWebhookEndpoint', status: 404, what: 'an id no endpoint has', request: admin('POST', '/webhook-endpoints/999/test') },
  { operation: 'testWebhookEndpoint', status: 413, what: 'a body it does not take, over 16 KiB', request: admin('POST', '/webhook-endpoints/1/test', JSON.stringify({ pad: BIG })) },
  { operation: 'testWebhookEndpoint', status: 415, what: 'a body it does not take, not JSON', request: admin('POST', '/webhook-endpoints/1/test', 'x', { 'content-type': 'text/plain' }) },
  { operation: 'listWebhookAttempts', status: 200, what: 'the attempts, newest first', request: admin('GET', '/webhook-endpoints/1/attempts?limit=5') },
  { operation: 'listWebhookAttempts', status: 400, what: 'a status filter outside the enum', request: admin('GET', '/webhook-endpoints/1/attempts?status=bogus') },
  { operation: 'listWebhookAttempts', status: 403, what: 'a read key', request: read('GET', '/webhook-endpoints/1/attempts') },
  { operation: 'listWebhookAttempts', status: 404, what: 'an id no endpoint has', request: admin('GET', '/webhook-endpoints/999/attempts') },
  { operation: 'resendWebhookEvent', status: 202, what: 'an event recorded before the endpoint', request: admin('POST', '/webhook-endpoints/1/resend', '{"eventId":1}') },
  { operation: 'resendWebhookEvent', status: 400, what: 'no eventId', request: admin('POST', '/webhook-endpoints/1/resend', '{}') },
  { operation: 'resendWebhookEvent', status: 403, what: 'a write key', request: write('POST', '/webhook-endpoints/1/resend', '{"eventId":1}') },
  { operation: 'resendWebhookEvent', status: 404, what: 'an id no endpoint has', request: admin('POST', '/webhook-endpoints/999/resend', '{"eventId":1}') },
  { operation: 'resendWebhookEvent', status: 409, what: 'a disabled endpoint', request: admin('POST', '/webhook-endpoints/2/resend', '{"eventId":1}') },
  { operation: 'resendWebhookEvent', status: 413, what: 'a body over 16 KiB', request: admin('POST', '/webhook-endpoints/1/resend', JSON.stringify({ eventId: 1, pad: BIG })) },
  { operation: 'resendWebhookEvent', status: 415, what: 'a body that is not JSON', request: admin('POST', '/webhook-endpoints/1/resend', '1', { 'content-type': 'text/plain' }) },
  { operation: 'resendWebhookEvent', status: 422, what: 'an event no one recorded', request: admin('POST', '/webhook-endpoints/1/resend', '{"eventId":99999}') },
  { operation: 'recoverWebhookDeliveries', status: 202, what: 'the last hour', request: (context) => admin('POST', '/webhook-endpoints/1/recover', JSON.stringify({ since: hourAgo(context) }))(context) },
  { operation: 'recoverWebhookDeliveries', status: 400, what: 'since not a date-time', request: admin('POST', '/webhook-endpoints/1/recover', '{"since":"yesterday"}') },
  { operation: 'recoverWebhookDeliveries', status: 403, what: 'a read key', request: (context) => read('POST', '/webhook-endpoints/1/recover', JSON.stringify({ since: hourAgo(context) }))(context) },
  { operation: 'recoverWebhookDeliveries', status: 404, what: 'an id no endpoint has', request: (context) => admin('POST', '/webhook-endpoints/999/recover', JSON.stringify({ since: hourAgo(context) }))(context) },
  { operation: 'recoverWebhookDeliveries', status: 409, what: 'a disabled endpoint', request: (context) => admin('POST', '/webhook-endpoints/2/recover', JSON.stringify({ since: hourAgo(context) }))(context) },
  { operation: 'recoverWebhookDeliveries', status: 413, what: 'a body over 16 KiB', request: admin('POST', '/webhook-endpoints/1/recover', JSON.stringify({ since: BIG })) },
  { operation: 'recoverWebhookDeliveries', status: 415, what: 'a body that is not JSON', request: admin('POST', '/webhook-endpoints/1/recover', 'x', { 'content-type': 'text/plain' }) },
  { operation: 'deleteWebhookEndpoint', status: 400, what: 'an id that is not an integer', request: admin('DELETE', '/webhook-endpoints/abc') },
  { operation: 'deleteWebhookEndpoint', status: 403, what: 'a write key', request: write('DELETE', '/webhook-endpoints/2') },
  { operation: 'deleteWebhookEndpoint', status: 413, what: 'a body it does not take, over 16 KiB', request: admin('DELETE', '/webhook-endpoints/2', JSON.stringify({ pad: BIG })) },
  { operation: 'deleteWebhookEndpoint', status: 415, what: 'a body it does not take, not JSON', request: admin('DELETE', '/webhook-endpoints/2', 'x', { 'content-type': 'text/plain' }) },
  { operation: 'deleteWebhookEndpoint', status: 204, what: 'the ed25519 endpoint', request: admin('DELETE', '/webhook-endpoints/2') },
  { operation: 'deleteWebhookEndpoint', status: 404, what: 'it again', request: admin('DELETE', '/webhook-endpoints/2') }
]

type Exchange = ReturnType<WebhookTrafficCase['request']>

/**
 * Each endpoint operation, for the questions asked of every operation (401, 429, 503): an admin key gets past the
 * role check; a recovery's window is the last hour of the app's clock, whatever it was moved to.
 */
export const WEBHOOK_OPERATIONS: ReadonlyArray<[string, (context: WebhookTrafficContext) => Exchange]> = ([
  ['createWebhookEndpoint', { method: 'POST', path: '/webhook-endpoints', headers: JSON_BODY, body: JSON.stringify({ url: 'https://127.0.0.1:9/other', events: ['pet.created'] }) }],
  ['listWebhookEndpoints', { method: 'GET', path: '/webhook-endpoints' }],
  ['getWebhookEndpoint', { method: 'GET', path: '/webhook-endpoints/1' }],
  ['updateWebhookEndpoint', { method: 'PATCH', path: '/webhook-endpoints/1', headers: MERGE_PATCH_BODY, body: '{"disabled":false}' }],
  ['deleteWebhookEndpoint', { method: 'DELETE', path: '/webhook-endpoints/1' }],
  ['rotateWebhookEndpointSecret', { method: 'POST', path: '/webhook-endpoints/1/rotate-secret' }],
  ['testWebhookEndpoint', { method: 'POST', path: '/webhook-endpoints/1/test' }],
  ['listWebhookAttempts', { method: 'GET', path: '/webhook-endpoints/1/attempts' }],
  ['resendWebhookEvent', { method: 'POST', path: '/webhook-endpoints/1/resend', headers: JSON_BODY, body: '{"eventId":1}' }],
  ['recoverWebhookDeliveries', { method: 'POST', path: '/webhook-endpoints/1/recover', headers: JSON_BODY, body: '' }]
] as const).map(([operation, exchange]): [string, (context: WebhookTrafficContext) => Exchange] =>
  [operation, (context) => operation === 'recoverWebhookDeliveries' ? { ...exchange, body: JSON.stringify({ since: hourAgo(context) }) } : exchange])

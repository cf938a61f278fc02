import assert from 'node:assert/strict'
import type { TestContext } from 'node:test'
import type { LightMyRequestResponse } from 'fastify'
import { generateApiKey, hashApiKey } from '../../src/capabilities/keys/api-keys.js'
import type { ApiKeyRole } from '../../src/capabilities/keys/index.js'
import { buildTestApp, type TestApp, type TestAppOptions } from './build-app.js'

/** The app and an `admin` key (what `/v1/webhook-endpoints` needs), with real receivers on 127.0.0.1 allowed (http, private networks). */
export interface WebhookApi extends TestApp {
  /** `Authorization` with an admin key named `integrator`. */
  admin: { authorization: string }
  /** Sends `method url` with the admin key and, when given, `body` as JSON (or as `contentType`). */
  call: (method: 'GET' | 'POST' | 'PATCH' | 'DELETE' | 'HEAD', url: string, body?: unknown, headers?: Record<string, string>) => Promise<LightMyRequestResponse>
  /** A key of `role` made now: `Authorization` with it. */
  keyOf: (role: ApiKeyRole, name?: string) => Promise<{ authorization: string }>
}

// receivers are real servers on 127.0.0.1; no per-key request limit gets in the way of a test's own traffic
const RECEIVER_ENV = { WEBHOOK_ALLOW_HTTP: 'true', WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true', RATE_LIMIT_MAX: '0' }

/** Builds the real app ({@link buildTestApp}) with an admin key; closed when the test ends. */
export async function buildWebhookApi (t: TestContext, options: TestAppOptions = {}): Promise<WebhookApi> {
  const api = await buildTestApp(t, { ...options, env: { ...RECEIVER_ENV, ...options.env } })
  const keyOf = async (role: ApiKeyRole, name: string = role): Promise<{ authorization: string }> => {
    const key = generateApiKey()
    await api.app.keyStore.createApiKey(name, hashApiKey(key), role)
    return { authorization: `Bearer ${key}` }
  }
  const admin = await keyOf('admin', 'integrator')
  const call: WebhookApi['call'] = async (method, url, body, headers = {}) => await api.app.inject({
    method,
    url,
    headers: { ...admin, ...(body === undefined ? {} : { 'content-type': method === 'PATCH' ? 'application/merge-patch+json' : 'application/json' }), ...headers },
    ...(body === undefined ? {} : { payload: typeof body === 'string' ? body : JSON.stringify(body) })
  })
  return { ...api, admin, call, keyOf }
}

/** Registers an endpoint through the API and returns its answer's body (fails on anything but 201). */
export async function registered (api: WebhookApi, body: Record<string, unknown>, headers: Record<string, string> = {}): Promise<{ id: number, secret?: string, publicKey?: string } & Record<string, unknown>> {
  const res = await api.call('POST', '/v1/webhook-endpoints', body, headers)
  assert.equal(res.statusCode, 201, res.body)
  return res.json()
}

/** Creates a pet through the API with the admin key (which may call every operation); its event's id. */
export async function recordPet (api: WebhookApi, name: string): Promise<number> {
  const res = await api.call('POST', '/v1/pets', { name, categoryId: 1 })
  assert.equal(res.statusCode, 201, res.body)
  const events = await api.app.eventStore.listEvents({ afterId: 0, limit: 100_000 })
  const last = events.events.at(-1)
  assert.ok(last !== undefined)
  return last.id
}

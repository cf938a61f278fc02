import type { FastifyRequest } from 'fastify'
import { Counter, type Registry } from 'prom-client'
import { webhookUrlForLog } from './webhook-url.js'

/** The changes of endpoints that are audited: each writes one log line and counts in `petstore_webhook_endpoint_changes_total`. */
export const AUDITED_ACTIONS = ['created', 'updated', 'secret_rotated', 'resent', 'recovered', 'deleted'] as const
export type AuditedAction = typeof AUDITED_ACTIONS[number]

/**
 * The audit of `/v1/webhook-endpoints`: who changed which endpoint how, as one log line at `info` naming the key
 * (its name, role and store id; never the key, never a secret) with `audit: "webhook_endpoint"`, and a counter by
 * action, declared here and registered in the app's registry, each action's series at 0 from the start.
 */
export class WebhookAudit {
  readonly #changes: Counter<'action'>

  constructor (registry: Registry) {
    this.#changes = new Counter({
      name: 'petstore_webhook_endpoint_changes_total',
      help: 'Changes of webhook endpoints through the API, by action (created, updated, secret_rotated, resent, recovered, deleted); each also writes an audit log line naming the key.',
      labelNames: ['action'],
      registers: [registry]
    })
    for (const action of AUDITED_ACTIONS) this.#changes.inc({ action }, 0)
  }

  /**
   * Audits `action` on endpoint `endpointId` by the request's key; `details` are what changed (names and values, never
   * a secret; a `url` is logged without its query, where a receiver may take a token).
   */
  record (request: FastifyRequest, action: AuditedAction, endpointId: number, details: Record<string, unknown> = {}): void {
    if (typeof details.url === 'string') details = { ...details, url: webhookUrlForLog(details.url) }
    const key = request.apiKey
    const by = key === null ? 'no key' : `key "${key.name}" (${key.role}${key.id === null ? ', from the environment' : `, id ${key.id}`})`
    request.log.info({ audit: 'webhook_endpoint', action, endpointId, apiKey: key === null ? null : { name: key.name, role: key.role, id: key.id }, ...details },
      `webhook endpoint ${endpointId} ${action.replace('_', ' ')} by ${by}`)
    this.#changes.inc({ action })
  }
}

import { Type, type Static } from '@sinclair/typebox'
import { pagedListQuerySchema, type PagedListSpec } from '../../infra/http/paged-list.js'

/** listWebhookEndpoints as a paged list, in id order: no filter. */
export const WEBHOOK_ENDPOINTS_LIST: PagedListSpec<never> = {
  path: '/webhook-endpoints',
  secretSetting: 'webhook_endpoints_cursor_secret',
  tag: 'v1',
  filters: {}
}

export const ListWebhookEndpointsQuerySchema = pagedListQuerySchema('endpoints', {})
export type ListWebhookEndpointsQuery = Static<typeof ListWebhookEndpointsQuerySchema>

/** What `status` keeps of an endpoint's attempts. */
export const ATTEMPT_STATUSES = ['failed', 'succeeded'] as const

/**
 * listWebhookAttempts as a paged list, newest first (a page starts below the last attempt id served): its cursors
 * are bound to the endpoint (whose path they are followed on) and to `status`.
 */
export const WEBHOOK_ATTEMPTS_LIST: PagedListSpec<'endpoint' | 'status'> = {
  path: '/webhook-endpoints/{endpointId}/attempts',
  secretSetting: 'webhook_attempts_cursor_secret',
  tag: 'v1',
  filters: { endpoint: '\\d{1,16}', status: `(?:${ATTEMPT_STATUSES.join('|')})?` }
}

export const ListWebhookAttemptsQuerySchema = pagedListQuerySchema('attempts', {
  status: Type.Optional(Type.Unsafe<typeof ATTEMPT_STATUSES[number]>({
    type: 'string',
    enum: [...ATTEMPT_STATUSES],
    description: 'Only the attempts that failed (each a retry is scheduled after, or the delivery was given up), or only those delivered.',
    examples: ['failed']
  }))
})
export type ListWebhookAttemptsQuery = Static<typeof ListWebhookAttemptsQuerySchema>

import { ApiError } from '../../infra/errors/catalogue.js'
import type { Int64 } from '../../infra/json/int64.js'
import type { WebhookEndpointRecord } from './store/webhook-store.js'
// its codes declared before any of its answers names one
import './webhook-errors.js'
import type { WebhookEndpointView } from './webhook-endpoint-schemas.js'
import { WebhookEndpointError } from './webhook-endpoints.js'

// how the API shows endpoints and words its refusals

/** An endpoint as the API answers it: its settings, then its health; what is unset is absent. */
export function endpointView (record: WebhookEndpointRecord): WebhookEndpointView {
  return {
    id: record.id,
    url: record.url,
    events: record.eventTypes,
    name: record.name,
    ...(record.description === null ? {} : { description: record.description }),
    disabled: record.disabledAt !== null,
    ...(record.disabledAt === null ? {} : { disabledAt: record.disabledAt }),
    ...(record.rateLimit === null ? {} : { rateLimit: record.rateLimit }),
    signing: record.signing,
    ...(record.publicKey === null ? {} : { publicKey: record.publicKey }),
    createdAt: record.createdAt,
    health: {
      waiting: record.waiting,
      failed: record.failed,
      ...(record.lastSuccessAt === null ? {} : { lastSuccessAt: record.lastSuccessAt }),
      ...(record.lastFailureAt === null ? {} : { lastFailureAt: record.lastFailureAt }),
      ...(record.lastFailure === null ? {} : { lastFailure: record.lastFailure })
    }
  }
}

/** The id of a path as a number, or undefined for one beyond any endpoint's (ids count up from 1, far below 2^53). */
export function endpointIdOf (id: Int64): number | undefined {
  return typeof id === 'number' ? id : undefined
}

export function endpointNotFound (id: Int64): ApiError {
  return new ApiError('webhook_endpoint_not_found', `No webhook endpoint has id ${id}.`)
}

export function endpointDisabled (id: number, what: string): ApiError {
  return new ApiError('webhook_endpoint_disabled', `Webhook endpoint ${id} is disabled, so nothing is sent to it: enable it first (PATCH {"disabled": false}), then ${what}.`)
}

/** A refusal of the endpoint rules as a 400 naming the body field (or the query parameter, for `since` and `until` of a recovery). */
export function invalidRequestOf (error: unknown): unknown {
  if (!(error instanceof WebhookEndpointError)) return error
  return new ApiError('invalid_request', error.field === 'url' ? `body: field "url" is refused: ${error.message}` : `body: field "${error.field}" ${error.message}`)
}

/** Runs a check of the endpoint rules: its refusal is a 400 naming the field. */
export async function checkedAsRequest<T> (check: () => T | Promise<T>): Promise<T> {
  try {
    return await check()
  } catch (error) {
    throw invalidRequestOf(error)
  }
}

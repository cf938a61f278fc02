import { Type } from '@sinclair/typebox'
import { ErrorSchema } from './error.js'

/** An OpenAPI response header, as @fastify/swagger reads it from a response schema. */
export interface HeaderSpec {
  type: 'string'
  description: string
  format?: string
  example?: string
}

export const WWW_AUTHENTICATE_HEADER: HeaderSpec = {
  type: 'string',
  description: 'The bearer challenge: `Bearer realm="petstore"`, with `error="invalid_request"` or `error="invalid_token"` when a key was sent but is malformed or unknown.',
  example: 'Bearer realm="petstore"'
}

export const RETRY_AFTER_HEADER: HeaderSpec = {
  type: 'string',
  description: 'Seconds to wait before retrying (RFC 9110): always `1` on a 503.',
  example: '1'
}

/** The schema of an Error answer with its description and headers. */
export function errorResponse (description: string, headers?: Record<string, HeaderSpec>) {
  return { ...Type.Ref(ErrorSchema), description, ...(headers === undefined ? {} : { headers }) }
}

/** The Error answers every authenticated operation can give. */
export function commonErrorResponses (headers?: Record<string, HeaderSpec>) {
  return {
    401: errorResponse('Missing, malformed, unknown or revoked API key (`unauthorized`).', { ...headers, 'WWW-Authenticate': WWW_AUTHENTICATE_HEADER }),
    500: errorResponse('Unexpected failure (`internal_error`); the message carries no internals.', headers),
    503: errorResponse('The store is unreachable or the instance is shutting down (`service_unavailable`); retry after `Retry-After` seconds.', { ...headers, 'Retry-After': RETRY_AFTER_HEADER })
  }
}

import { Type } from '@sinclair/typebox'
import { INSUFFICIENT_SCOPE_CHALLENGE } from '../auth/roles.js'
import { RETRY_AFTER_SECONDS } from '../errors/catalogue.js'
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

export const INSUFFICIENT_SCOPE_HEADER: HeaderSpec = {
  type: 'string',
  description: 'The bearer challenge of a valid key that may not call this operation (RFC 6750 §3.1).',
  example: INSUFFICIENT_SCOPE_CHALLENGE
}

/** The 403 of every operation that writes, added to the document by method (see `roleNeededFor`), never by hand. */
export const INSUFFICIENT_SCOPE_DESCRIPTION = 'The API key is valid but has the `read` role, and this operation writes (`insufficient_scope`); ' +
  'decided before the body is read, so nothing about it is checked or changed.'

export const RETRY_AFTER_HEADER: HeaderSpec = {
  type: 'string',
  description: `Seconds to wait before retrying (RFC 9110): always \`${RETRY_AFTER_SECONDS}\` on a 503.`,
  example: String(RETRY_AFTER_SECONDS)
}

export const RATE_LIMIT_HEADERS: Record<string, HeaderSpec> = {
  'RateLimit-Policy': {
    type: 'string',
    description: 'IETF RateLimit header fields draft: the limit that applies, `"<policy>";q=<quota>;w=<window seconds>`: ' +
      '`per-key` for a request with a valid key, `failed-auth` (per client address) for a 401.',
    example: '"per-key";q=6000;w=60'
  },
  RateLimit: {
    type: 'string',
    description: 'What is left of that limit: `"<policy>";r=<remaining>;t=<seconds until the window resets>`.',
    example: '"per-key";r=5999;t=60'
  }
}

/** The schema of an Error answer with its description and headers. */
export function errorResponse (description: string, headers?: Record<string, HeaderSpec>) {
  return { ...Type.Ref(ErrorSchema), description, ...(headers === undefined ? {} : { headers }) }
}

/** The Error answers every authenticated operation can give. */
export function commonErrorResponses (headers?: Record<string, HeaderSpec>) {
  return {
    401: errorResponse('Missing, malformed, unknown or revoked API key (`unauthorized`).', { ...headers, 'WWW-Authenticate': WWW_AUTHENTICATE_HEADER }),
    429: errorResponse('Over a rate limit (`rate_limited`): the API key\'s request limit, or too many failed authentications from this address; retry after `Retry-After` seconds.',
      { ...headers, 'Retry-After': { type: 'string', description: 'Seconds until the limit\'s window resets.', example: '30' } }),
    500: errorResponse('Unexpected failure (`internal_error`); the message carries no internals.', headers),
    503: errorResponse('The store is unreachable or the instance is shutting down (`service_unavailable`); retry after `Retry-After` seconds.', { ...headers, 'Retry-After': RETRY_AFTER_HEADER })
  }
}

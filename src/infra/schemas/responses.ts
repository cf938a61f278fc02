import { Type } from '@sinclair/typebox'
import { INSUFFICIENT_SCOPE_CHALLENGE } from '../credentials/credentials.js'
import { ERROR_CODES, errorDefinition, RETRY_AFTER_SECONDS, type ErrorCode } from '../errors/catalogue.js'
import { ERROR_SCHEMA_ID, type ErrorBody } from './error.js'

/** An OpenAPI response header, as @fastify/swagger reads it from a response schema: what it holds, in words and as schema keywords. */
export interface HeaderSpec {
  type: 'string'
  description: string
  format?: string
  pattern?: string
  maxLength?: number
  enum?: readonly string[]
  example?: string
}

/** A header as the OpenAPI document writes it: its words, its schema (the keywords), its example. */
export function headerObject ({ description, example, ...schema }: HeaderSpec): { description: string, schema: Omit<HeaderSpec, 'description' | 'example'>, example?: string } {
  return { description, schema, ...(example === undefined ? {} : { example }) }
}

/** Seconds, as `Retry-After` writes them. */
const SECONDS = '^[0-9]{1,6}$'
// a header value no answer of this service exceeds: RateLimit fields, links
const SHORT_HEADER_MAX_LENGTH = 200

/** A pet's strong entity tag, as src/http/etag.ts makes them: getPet and updatePet send the same one for the same pet. */
export const ETAG_HEADER: HeaderSpec = {
  type: 'string',
  description: 'Strong entity tag of this representation (it changes when the pet does); send it back in `If-None-Match` to revalidate, or in `If-Match` to make an `updatePet` conditional.',
  pattern: '^"[A-Za-z0-9_-]{1,64}"$',
  maxLength: 66,
  example: '"3q2-7w"'
}

export const WWW_AUTHENTICATE_HEADER: HeaderSpec = {
  type: 'string',
  description: 'The bearer challenge: `Bearer realm="petstore"`, with `error="invalid_request"` or `error="invalid_token"` when a key was sent but is malformed or unknown.',
  enum: ['Bearer realm="petstore"', 'Bearer realm="petstore", error="invalid_request"', 'Bearer realm="petstore", error="invalid_token"'],
  example: 'Bearer realm="petstore"'
}

export const INSUFFICIENT_SCOPE_HEADER: HeaderSpec = {
  type: 'string',
  description: 'The bearer challenge of a valid key that may not call this operation (RFC 6750 §3.1).',
  enum: [INSUFFICIENT_SCOPE_CHALLENGE],
  example: INSUFFICIENT_SCOPE_CHALLENGE
}

export const RETRY_AFTER_HEADER: HeaderSpec = {
  type: 'string',
  description: `Seconds to wait before retrying (RFC 9110): always \`${RETRY_AFTER_SECONDS}\` on a 503.`,
  pattern: SECONDS,
  maxLength: 6,
  example: String(RETRY_AFTER_SECONDS)
}

export const RATE_LIMIT_HEADERS: Record<string, HeaderSpec> = {
  'RateLimit-Policy': {
    type: 'string',
    description: 'IETF RateLimit header fields draft: the limit that applies, `"<policy>";q=<quota>;w=<window seconds>`: ' +
      '`per-key` for a request with a valid key, `failed-auth` (per client address) for a request whose key fails (its 401, or its 429 once the address is over that limit).',
    pattern: '^"(per-key|failed-auth)";q=[0-9]+;w=[0-9]+$',
    maxLength: SHORT_HEADER_MAX_LENGTH,
    example: '"per-key";q=6000;w=60'
  },
  RateLimit: {
    type: 'string',
    description: 'What is left of that limit: `"<policy>";r=<remaining>;t=<seconds until the window resets>`.',
    pattern: '^"(per-key|failed-auth)";r=[0-9]+;t=[0-9]+$',
    maxLength: SHORT_HEADER_MAX_LENGTH,
    example: '"per-key";r=5999;t=60'
  }
}

// the codes an error answer's description names, as `code`
const NAMED_CODE = /`([a-z_]+)`/g

/** The codes a description names in backticks, in catalogue order. */
export function codesNamedIn (description: string): ErrorCode[] {
  const named = new Set([...description.matchAll(NAMED_CODE)].map((match) => match[1]))
  return ERROR_CODES.filter((code) => named.has(code))
}

/** An example Error body: the code's own status, and its catalogue message unless a more telling one is given. */
export function errorExample (code: ErrorCode, message?: string, status: number = errorDefinition(code).status): ErrorBody {
  return { code, message: message ?? errorDefinition(code).message, status }
}

/**
 * The schema of an Error answer with its description, headers and examples: one example for each
 * code the description names in backticks (so the document shows, for each answer, the codes it
 * can carry with their own status); `messages` gives an example a more telling message than the catalogue's.
 */
export function errorResponse (description: string, headers?: Record<string, HeaderSpec>, messages: Partial<Record<ErrorCode, string>> = {}, status?: number) {
  const examples = Object.fromEntries(codesNamedIn(description).map((code) => [code, { summary: code, value: errorExample(code, messages[code], status) }]))
  return { ...Type.Ref(ERROR_SCHEMA_ID), description, 'x-examples': examples, ...(headers === undefined ? {} : { headers }) }
}

/** The Error answers every authenticated operation can give. */
export function commonErrorResponses (headers?: Record<string, HeaderSpec>) {
  return {
    401: errorResponse('Missing, malformed, unknown or revoked API key (`unauthorized`).', { ...headers, 'WWW-Authenticate': WWW_AUTHENTICATE_HEADER }),
    429: errorResponse('Over a rate limit (`rate_limited`): the API key\'s request limit, or too many failed authentications from this address ' +
      '(only requests whose key fails are refused for that); retry after `Retry-After` seconds.',
    { ...headers, 'Retry-After': { type: 'string', description: 'Seconds until the limit\'s window resets.', pattern: SECONDS, maxLength: 6, example: '30' } }),
    500: errorResponse('Unexpected failure (`internal_error`); the message carries no internals.', headers),
    503: errorResponse('The store is unreachable or the instance is shutting down (`service_unavailable`), or the instance is overloaded ' +
      'and turned the request away unread (`overloaded`); retry after `Retry-After` seconds.', { ...headers, 'Retry-After': RETRY_AFTER_HEADER })
  }
}

/** The 503 of an operation outside `/v1` that is shed while the instance is overloaded (the documents). */
export function overloadedResponse () {
  return errorResponse('The instance is overloaded and turned the request away unread (`overloaded`); retry after `Retry-After` seconds.', { 'Retry-After': RETRY_AFTER_HEADER })
}

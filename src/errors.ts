import { STATUS_CODES } from 'node:http'
import type { Socket } from 'node:net'
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { REQUEST_ID_HEADER } from './http/request-id.js'

/**
 * The one catalogue of error codes: each has its HTTP status and a default message.
 * Codes are stable API: clients branch on them, so add new ones, never rename.
 */
export const ERRORS = {
  invalid_request: { status: 400, message: 'The request is invalid.' },
  malformed_json: { status: 400, message: 'The request body is not valid JSON.' },
  invalid_cursor: { status: 400, message: 'The cursor is not one this service issued for this query.' },
  unauthorized: { status: 401, message: 'A valid API key is required: send "Authorization: Bearer <API key>".' },
  pet_not_found: { status: 404, message: 'No pet has this id.' },
  not_found: { status: 404, message: 'No such resource.' },
  method_not_allowed: { status: 405, message: 'This method is not allowed on this resource.' },
  request_timeout: { status: 408, message: 'The request did not arrive in time.' },
  idempotency_request_in_progress: { status: 409, message: 'A request with this Idempotency-Key is still being processed; retry after it finishes.' },
  gone: { status: 410, message: 'This operation has been removed.' },
  payload_too_large: { status: 413, message: 'The request body is too large.' },
  unsupported_media_type: { status: 415, message: 'The request body must be application/json.' },
  idempotency_key_reused: { status: 422, message: 'This Idempotency-Key was already used with a different request body.' },
  rate_limited: { status: 429, message: 'Too many requests; retry after the time given in Retry-After.' },
  headers_too_large: { status: 431, message: 'The request headers are too large.' },
  internal_error: { status: 500, message: 'An unexpected error occurred; it has been logged.' },
  not_implemented: { status: 501, message: 'This operation is not implemented.' },
  service_unavailable: { status: 503, message: 'The service is temporarily unavailable; retry shortly.' }
} as const satisfies Record<string, { status: number, message: string }>

export type ErrorCode = keyof typeof ERRORS

/** Every code, in catalogue order (the `code` enum of the Error schema). */
export const ERROR_CODES = Object.keys(ERRORS) as ErrorCode[]

/** The body of every error answer. */
export interface ErrorBody {
  code: ErrorCode
  message: string
  status: number
}

// Sent with every 503 (and 409 in-progress): the wait is usually brief, and clients that honour it spread their retries
export const RETRY_AFTER_SECONDS = '1'

/** An error meant for the client: its code, status and message go out as they are. */
export class ApiError extends Error {
  readonly code: ErrorCode
  readonly status: number
  readonly headers: Readonly<Record<string, string>>

  constructor (code: ErrorCode, message?: string, headers: Record<string, string> = {}) {
    super(message ?? ERRORS[code].message)
    this.name = 'ApiError'
    this.code = code
    this.status = ERRORS[code].status
    this.headers = this.status === 503 ? { 'retry-after': RETRY_AFTER_SECONDS, ...headers } : headers
  }

  toBody (): ErrorBody {
    return { code: this.code, message: this.message, status: this.status }
  }
}

/** The store cannot be reached or is not ready; the request may be retried. */
export class StoreUnavailableError extends Error {
  constructor (message: string, options?: ErrorOptions) {
    super(message, options)
    this.name = 'StoreUnavailableError'
  }
}

// ajv's error for one value, as Fastify attaches it to a validation error
interface ValidationIssue {
  keyword: string
  instancePath: string
  params: Record<string, unknown>
  message?: string
}

const PART_NAMES: Record<string, string> = {
  body: 'body',
  querystring: 'query parameter',
  params: 'path parameter',
  headers: 'header'
}

/** Turns the first ajv issue into a sentence naming the field and the problem. */
export function describeValidationIssue (part: string, issue: ValidationIssue): string {
  const partName = PART_NAMES[part] ?? part
  const path = issue.instancePath.split('/').slice(1).map(decodePointerToken)
  if (issue.keyword === 'required') {
    const missing = String(issue.params.missingProperty)
    return part === 'body' && path.length === 0
      ? `body: field "${missing}" is required`
      : `${partName} "${[...path, missing].join('.')}" is required`
  }
  if (issue.keyword === 'additionalProperties') {
    const extra = String(issue.params.additionalProperty)
    return `${partName === 'body' ? 'body: field' : partName} "${[...path, extra].join('.')}" is not allowed${extra === 'id' ? ' (ids are assigned by the service)' : ''}`
  }
  const problem = describeProblem(issue)
  if (path.length === 0) return `${partName} ${problem}`
  return part === 'body'
    ? `body: field "${path.join('.')}" ${problem}`
    : `${partName} "${path.join('.')}" ${problem}`
}

function describeProblem (issue: ValidationIssue): string {
  const p = issue.params
  switch (issue.keyword) {
    case 'type': return `must be ${article(String(p.type))}`
    case 'enum': return `must be one of ${(p.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(', ')}`
    case 'minimum': return `must be ${String(p.comparison)} ${String(p.limit)}`
    case 'maximum': return `must be ${String(p.comparison)} ${String(p.limit)}`
    case 'minLength': return Number(p.limit) === 1 ? 'must not be empty' : `must be at least ${String(p.limit)} characters long`
    case 'maxLength': return `must be at most ${String(p.limit)} characters long`
    // the one pattern in the API is the pet name's
    case 'pattern': return 'must be printable text with at least one non-blank character and no control characters'
    default: return issue.message ?? 'is invalid'
  }
}

function article (type: string): string {
  return /^[aeiou]/.test(type) ? `an ${type}` : `a ${type}`
}

function decodePointerToken (token: string): string {
  return token.replace(/~1/g, '/').replace(/~0/g, '~')
}

// Fastify's own failures before a handler runs, by their code
const FRAMEWORK_ERRORS: Record<string, (error: FastifyError) => ApiError> = {
  FST_ERR_CTP_INVALID_MEDIA_TYPE: () => new ApiError('unsupported_media_type'),
  FST_ERR_CTP_BODY_TOO_LARGE: () => new ApiError('payload_too_large', `The request body is larger than the ${BODY_LIMIT_BYTES}-byte limit.`),
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: () => new ApiError('invalid_request', 'Content-Length does not match the length of the body'),
  FST_ERR_BAD_URL: () => new ApiError('invalid_request', 'The request URL is malformed'),
  FST_ERR_MAX_PARAM_LENGTH: () => new ApiError('invalid_request', 'A path parameter is too long')
}

/** Largest request body accepted, in bytes (a NewPet needs a few hundred). */
export const BODY_LIMIT_BYTES = 16 * 1024

/** Maps any failure to an {@link ApiError}; unknown failures become internal_error. */
export function toApiError (error: unknown): ApiError {
  if (error instanceof ApiError) return error
  if (error instanceof StoreUnavailableError) return new ApiError('service_unavailable')
  const fastifyError = error as Partial<FastifyError> | undefined
  if (fastifyError?.validation !== undefined && fastifyError.validation.length > 0) {
    return new ApiError('invalid_request', describeValidationIssue(fastifyError.validationContext ?? 'request', fastifyError.validation[0] as ValidationIssue))
  }
  const fromFramework = fastifyError?.code !== undefined ? FRAMEWORK_ERRORS[fastifyError.code] : undefined
  if (fromFramework !== undefined) return fromFramework(fastifyError as FastifyError)
  const status = fastifyError?.statusCode
  if (status !== undefined && status >= 400 && status < 500) return new ApiError('invalid_request')
  return new ApiError('internal_error')
}

/** Fastify error handler: logs server faults, answers every failure with an Error body. */
export function handleError (error: unknown, request: FastifyRequest, reply: FastifyReply): FastifyReply {
  const apiError = toApiError(error)
  if (error instanceof StoreUnavailableError) {
    // the database's or the network's state, not a fault here: counted in the store metrics, and
    // also what a request still running as the store closes at shutdown gets
    request.log.warn({ err: error }, 'request failed: the store is unavailable')
  } else if (apiError.status >= 500) {
    request.log.error({ err: error }, 'request failed')
  } else {
    request.log.info({ code: apiError.code, reason: apiError.message }, 'request rejected')
  }
  return sendError(reply, apiError)
}

/**
 * Answers what Node's HTTP parser rejects before Fastify sees a request (garbled
 * request lines, conflicting lengths, oversized headers, timeouts) in the Error shape.
 */
export function handleClientError (this: FastifyInstance, error: Error & { code?: string }, socket: Socket): void {
  if (error.code === 'ECONNRESET' || socket.destroyed) return
  const apiError = error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
    ? new ApiError('request_timeout')
    : error.code === 'HPE_HEADER_OVERFLOW'
      ? new ApiError('headers_too_large')
      : new ApiError('invalid_request', 'The request is not valid HTTP/1.1.')
  // code and message only: Node's parse errors carry the raw request bytes, headers (and keys) included
  this.log.debug({ code: error.code, reason: error.message }, 'client error')
  if (socket.writable) {
    const body = JSON.stringify(apiError.toBody())
    socket.write(`HTTP/1.1 ${apiError.status} ${STATUS_CODES[apiError.status] ?? ''}\r\nContent-Type: application/json; charset=utf-8\r\n` +
      `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`)
  }
  socket.destroy()
}

/** Sends an {@link ApiError} as the Error body, with its headers. */
export function sendError (reply: FastifyReply, error: ApiError): FastifyReply {
  // also for failures before any hook ran (a malformed URL), so every answer names its request
  return reply.code(error.status).header(REQUEST_ID_HEADER, reply.request.id).headers(error.headers).type('application/json; charset=utf-8').send(error.toBody())
}

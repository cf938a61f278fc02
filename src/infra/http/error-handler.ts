import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify'
import { ApiError, StoreUnavailableError } from '../errors/catalogue.js'
import type { ErrorBody } from '../schemas/error.js'
import { BODY_TOO_LARGE_MESSAGE } from './content-types.js'
import { REQUEST_ID_HEADER } from './request-id.js'
import { describeValidationIssue } from './validation-messages.js'

// Fastify's own failures before a handler runs, by their code
const FRAMEWORK_ERRORS: Record<string, (error: FastifyError) => ApiError> = {
  FST_ERR_CTP_INVALID_MEDIA_TYPE: () => new ApiError('unsupported_media_type'),
  FST_ERR_CTP_BODY_TOO_LARGE: () => new ApiError('payload_too_large', BODY_TOO_LARGE_MESSAGE),
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: () => new ApiError('invalid_request', 'Content-Length does not match the length of the body'),
  FST_ERR_BAD_URL: () => new ApiError('invalid_request', 'The request URL is malformed'),
  FST_ERR_MAX_PARAM_LENGTH: () => new ApiError('invalid_request', 'A path parameter is too long')
}

/** The Error body of an {@link ApiError}. */
export function errorBody (error: ApiError): ErrorBody {
  return { code: error.code, message: error.message, status: error.status }
}

/** Maps any failure to an {@link ApiError}; unknown failures become internal_error. */
export function toApiError (error: unknown): ApiError {
  if (error instanceof ApiError) return error
  if (error instanceof StoreUnavailableError) return new ApiError('service_unavailable')
  const fastifyError = error as Partial<FastifyError> | undefined
  const issue = fastifyError?.validation?.[0]
  if (issue !== undefined) {
    return new ApiError('invalid_request', describeValidationIssue(fastifyError?.validationContext ?? 'request', issue))
  }
  const fromFramework = fastifyError?.code !== undefined ? FRAMEWORK_ERRORS[fastifyError.code] : undefined
  if (fromFramework !== undefined) return fromFramework(fastifyError as FastifyError)
  const status = fastifyError?.statusCode
  if (status !== undefined && status >= 400 && status < 500) return new ApiError('invalid_request')
  return new ApiError('internal_error')
}

/**
 * Fastify error handler: answers every failure with an Error body, and logs it at the level it
 * deserves. `error`, with the stack, is for faults of ours (500) alone; an unavailable store or a
 * shutdown (503) is a `warn`; every answer a client can provoke (4xx, 501 for what v1 does not
 * implement) is an `info` line without a stack, so no key holder can flood the error log.
 */
export function handleError (error: unknown, request: FastifyRequest, reply: FastifyReply): FastifyReply {
  const apiError = toApiError(error)
  if (error instanceof StoreUnavailableError) {
    // the database's or the network's state, not a fault here: counted in the store metrics, and
    // also what a request still running as the store closes at shutdown gets
    request.log.warn({ err: error }, 'request failed: the store is unavailable')
  } else if (apiError.code === 'internal_error') {
    request.log.error({ err: error }, 'request failed')
  } else if (apiError.code === 'service_unavailable') {
    // shutting down, or a probe found the store down (the probe logs why)
    request.log.warn({ code: apiError.code, reason: apiError.message }, 'request refused: unavailable')
  } else {
    request.log.info({ code: apiError.code, reason: apiError.message }, 'request rejected')
  }
  return sendError(reply, apiError)
}

/** Sends an {@link ApiError} as the Error body, with its headers. */
export function sendError (reply: FastifyReply, error: ApiError): FastifyReply {
  // also for failures before any hook ran (a malformed URL), so every answer names its request
  return reply.code(error.status).header(REQUEST_ID_HEADER, reply.request.id).headers(error.headers).type('application/json; charset=utf-8').send(errorBody(error))
}

/** The error of a path no route serves. */
export function noRoute (request: FastifyRequest): ApiError {
  const path = request.url.split('?')[0] ?? ''
  const hint = path.length > 1 && path.endsWith('/') ? ' (no path ends in "/")' : ''
  return new ApiError('not_found', `No route ${request.method} ${path}${hint}; the API is described at /v1/openapi.json.`)
}

/**
 * The answer to a request no route serves, in the Error shape (and logged as every refusal is):
 * 404, or 501 for a method the server does not recognize at all (WebDAV's PROPFIND, …; RFC 9110
 * §15.6.2). The methods it recognizes (Fastify's, HTTP's own) get 405 with `Allow` on a path that
 * exists without them (see method-not-allowed.ts).
 */
export async function notFound (request: FastifyRequest, reply: FastifyReply): Promise<void> {
  const recognized = request.server.supportedMethods
  const error = recognized.includes(request.method)
    ? noRoute(request)
    : new ApiError('not_implemented', `The method ${request.method} is not implemented by this server; it recognizes ${recognized.join(', ')}.`)
  await handleError(error, request, reply)
}

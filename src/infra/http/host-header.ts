import type { FastifyRequest } from 'fastify'
import { ApiError } from '../errors/catalogue.js'

/** How many times a request's raw headers name `Host`. */
function countHostHeaders (rawHeaders: readonly string[]): number {
  let count = 0
  for (let i = 0; i < rawHeaders.length; i += 2) {
    const name = rawHeaders[i] as string
    // the usual spellings first: lower-casing every name of every request allocated a string each
    if (name.length === 4 && (name === 'host' || name === 'Host' || name.toLowerCase() === 'host')) count++
  }
  return count
}

/**
 * RFC 9112 §3.2: an HTTP/1.1 request without a `Host` header, or with more than one, is 400. Node
 * would refuse the first with a bare 400 of its own (its `requireHostHeader`, turned off for this)
 * and take the second; here both get an Error body and their `X-Request-Id`, before any other check
 * (authentication included): `http/answer-headers.ts` asks this first thing.
 */
export function hostHeaderProblem (request: FastifyRequest): ApiError | undefined {
  const hosts = countHostHeaders(request.raw.rawHeaders)
  if (hosts > 1) return new ApiError('invalid_request', 'header "Host" must be sent once (RFC 9112 §3.2)')
  if (hosts === 0 && request.raw.httpVersion === '1.1') return new ApiError('invalid_request', 'header "Host" is required in an HTTP/1.1 request (RFC 9112 §3.2)')
  return undefined
}

import { randomUUID } from 'node:crypto'
import { STATUS_CODES } from 'node:http'
import type { Socket } from 'node:net'
import type { FastifyInstance } from 'fastify'
import { ApiError } from '../errors/catalogue.js'
import { errorBody } from './error-handler.js'

/**
 * Answers what Node's HTTP parser rejects before Fastify sees a request (garbled
 * request lines, conflicting lengths, oversized headers, timeouts) in the Error shape,
 * written straight to the socket: there is no request or reply object yet.
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
    const body = JSON.stringify(errorBody(apiError))
    // no request was read, so none of its id: a new one, as for a request that sent none
    socket.write(`HTTP/1.1 ${apiError.status} ${STATUS_CODES[apiError.status] ?? ''}\r\nContent-Type: application/json; charset=utf-8\r\nX-Request-Id: ${randomUUID()}\r\n` +
      `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`)
  }
  socket.destroy()
}

import { randomUUID } from 'node:crypto'
import type { IncomingMessage } from 'node:http'

/** The header a request id arrives in and is echoed back in. */
export const REQUEST_ID_HEADER = 'x-request-id'

/** Longest incoming request id kept. */
export const REQUEST_ID_MAX_LENGTH = 128

// what a proxy or client may hand us: ids like UUIDs, ULIDs or "trace-id/span-id"; nothing that
// could forge a log line or break a header
/** What an `X-Request-Id` may hold, incoming or outgoing (a UUID fits). */
export const REQUEST_ID_PATTERN = `^[A-Za-z0-9._:@/+=-]{1,${REQUEST_ID_MAX_LENGTH}}$`
const VALID_REQUEST_ID = new RegExp(REQUEST_ID_PATTERN)

/** The incoming `X-Request-Id` when it is a plausible id, else a new UUID (Fastify's `genReqId`). */
export function requestIdFor (request: IncomingMessage): string {
  const incoming = request.headers[REQUEST_ID_HEADER]
  return typeof incoming === 'string' && VALID_REQUEST_ID.test(incoming) ? incoming : randomUUID()
}

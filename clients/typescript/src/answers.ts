import { PetStoreError, type OperationName } from './errors.js'
import type { ClientSettings } from './options.js'
import type { ApiAnswer } from './transport.js'

/** The URL of `path` under the client's `baseUrl`. */
export function endpoint (settings: ClientSettings, path: string): URL {
  return new URL(settings.baseUrl + path)
}

export function isObject (value: unknown): boolean {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

/** `value` when the answer has the documented shape; an `unexpected_response` otherwise. */
export function expectShape<T> (ok: boolean, value: T, operation: OperationName, { response, attempts }: ApiAnswer): T {
  if (ok) return value
  throw new PetStoreError({
    code: 'unexpected_response',
    status: response.status,
    message: `${operation}: the HTTP ${response.status} answer is not what the API describes`,
    operation,
    requestId: response.headers.get('x-request-id') ?? undefined,
    attempts
  })
}

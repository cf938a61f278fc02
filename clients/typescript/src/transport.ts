import { PetStoreError, type OperationName, type PetStoreErrorCode } from './errors.js'
import { parseJson, stringifyJson } from './exact-json.js'
import { isRetryableAnswer, parseRetryAfter, retryDelayMs, sleep, type RetryPolicy } from './retry.js'

/** What a retry is about to do, for logging or metrics. */
export interface RetryEvent {
  operation: OperationName
  /** The attempt that failed (1 for the first request). */
  attempt: number
  /** How long the client waits before the next attempt. */
  delayMs: number
  /** Why the attempt failed. */
  error: PetStoreError
}

/** The client's settings the transport works with. */
export interface TransportSettings {
  readonly apiKey: string
  readonly fetch: typeof globalThis.fetch
  readonly timeoutMs: number
  readonly retry: RetryPolicy
  readonly onRetry: ((event: RetryEvent) => void) | undefined
}

/** One call of an operation, sent until it succeeds or may not be retried any more. */
export interface ApiRequest {
  operation: OperationName
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE'
  url: URL
  /** Sent as JSON (a bigint as its digits). */
  body?: unknown
  /** The body's media type (default `application/json`). */
  contentType?: string
  headers?: Record<string, string>
  signal?: AbortSignal | undefined
  /** Sees every answer, error answers included (getPet reads its deprecation headers there). */
  onAnswer?: (response: Response) => void
}

/** A successful answer and its JSON body (int64 values beyond 2^53 as bigints). */
export interface ApiAnswer {
  response: Response
  body: unknown
  /** How many requests it took. */
  attempts: number
}

/** A failed attempt: what to throw if it is the last, and whether another may follow. */
export interface Failure {
  code: PetStoreErrorCode
  status: number
  message: string
  requestId: string
  retryAfterMs?: number
  cause?: unknown
  retryable: boolean
}

/**
 * Sends `request`, retrying what {@link isRetryableAnswer} allows and network failures, at most
 * `retry.retries` times. Throws a {@link PetStoreError}, or the signal's reason when the caller aborts.
 */
export async function send (settings: TransportSettings, request: ApiRequest): Promise<ApiAnswer> {
  // one id for every attempt of this call, so the service's logs show them together
  const requestId = globalThis.crypto.randomUUID()
  const headers: Record<string, string> = {
    accept: 'application/json',
    authorization: `Bearer ${settings.apiKey}`,
    'x-request-id': requestId,
    ...request.headers
  }
  if (request.body !== undefined) headers['content-type'] = request.contentType ?? 'application/json'
  const init: RequestInit = {
    method: request.method,
    headers,
    // the API never redirects: a redirect is reported, and the key never follows one elsewhere
    redirect: 'manual',
    ...(request.body === undefined ? {} : { body: stringifyJson(request.body) })
  }
  for (let attempt = 1; ; attempt++) {
    const outcome = await attemptOnce(settings, request, init, requestId)
    if ('body' in outcome) return { ...outcome, attempts: attempt }
    const { retryable, ...failure } = outcome
    const error = new PetStoreError({ ...failure, operation: request.operation, attempts: attempt })
    // a Retry-After longer than the longest wait allowed is handed to the caller rather than slept through
    if (!retryable || attempt > settings.retry.retries || (error.retryAfterMs ?? 0) > settings.retry.maxDelayMs) throw error
    const delayMs = retryDelayMs(settings.retry, attempt, error.retryAfterMs)
    settings.onRetry?.({ operation: request.operation, attempt, delayMs, error })
    await sleep(delayMs, request.signal)
  }
}

async function attemptOnce (settings: TransportSettings, request: ApiRequest, init: RequestInit, requestId: string): Promise<Omit<ApiAnswer, 'attempts'> | Failure> {
  const timeout = AbortSignal.timeout(settings.timeoutMs)
  const signal = request.signal === undefined ? timeout : AbortSignal.any([request.signal, timeout])
  let response: Response
  let text: string
  try {
    // called unbound: a browser's fetch refuses any `this` but the window ("Illegal invocation")
    const { fetch } = settings
    response = await fetch(request.url, { ...init, signal })
    text = await response.text()
  } catch (error) {
    if (request.signal?.aborted === true) throw request.signal.reason
    const reason = timeout.aborted ? `no answer within ${settings.timeoutMs} ms` : describeNetworkError(error)
    return {
      code: 'network_error',
      status: 0,
      message: `${request.operation}: ${request.method} ${request.url.href} failed: ${reason}`,
      requestId,
      cause: error,
      retryable: true
    }
  }
  request.onAnswer?.(response)
  const json = parseBody(text)
  if (response.ok) {
    // 204 No Content (a delete): nothing to read
    if (response.status === 204) return { response, body: undefined }
    if (json.ok) return { response, body: json.value }
    return {
      code: 'unexpected_response',
      status: response.status,
      message: `${request.operation}: HTTP ${response.status} answer whose body is not JSON`,
      requestId: response.headers.get('x-request-id') ?? requestId,
      retryable: false
    }
  }
  return failureOf(request.operation, response, text, requestId)
}

/** What an error answer says: its Error body's code and message, its `Retry-After`, and whether to try again. */
export function failureOf (operation: OperationName, response: Response, text: string, requestId: string): Failure {
  const answeredId = response.headers.get('x-request-id') ?? requestId
  const json = parseBody(text)
  const retryAfterMs = parseRetryAfter(response.headers.get('retry-after'))
  const errorBody = json.ok ? asErrorBody(json.value) : undefined
  return {
    ...(errorBody ?? {
      code: 'unexpected_response',
      message: `${operation}: HTTP ${response.status} answer without an Error body (content-type: ${response.headers.get('content-type') ?? 'none'})`
    }),
    status: response.status,
    requestId: answeredId,
    ...(retryAfterMs === undefined ? {} : { retryAfterMs }),
    retryable: isRetryableAnswer(response.status, errorBody?.code)
  }
}

function parseBody (text: string): { ok: true, value: unknown } | { ok: false } {
  try {
    return { ok: true, value: parseJson(text) }
  } catch {
    return { ok: false }
  }
}

/** The code and message of an Error body; undefined for anything else. */
function asErrorBody (value: unknown): { code: string, message: string } | undefined {
  if (typeof value !== 'object' || value === null) return undefined
  const { code, message } = value as Record<string, unknown>
  return typeof code === 'string' && typeof message === 'string' ? { code, message } : undefined
}

/** The most telling part of a fetch failure: undici's `cause` code (ECONNRESET, ECONNREFUSED, …) or a message. */
export function describeNetworkError (error: unknown): string {
  let current = error
  for (let depth = 0; depth < 4 && current instanceof Error; depth++) {
    const code = (current as Error & { code?: unknown }).code
    if (typeof code === 'string') return `${code} (${current.message})`
    if (current.cause === undefined) return current.message
    current = current.cause
  }
  return String(current)
}

/**
 * The contract-equal peer's HTTP plumbing around Fastify: the Error answer of any failure, the JSON body parser,
 * the validator compiler, the fixed-window limits and the stand-in routes (404, 405).
 */
import { Ajv, type ValidateFunction } from 'ajv'
import type { FastifyError, FastifyReply, FastifyRequest, FastifySchemaCompiler, RouteOptions } from 'fastify'
import { ApiError, decimalInteger, int64Check, parseBody, validationMessage, type RoundedLiteral, type ValidationIssue } from './contract.js'
import { isUnavailable } from './rows.js'

/** The Error answer of any failure: ours, a store's, Ajv's (naming the field), Fastify's own. */
export function toApiError (error: unknown): ApiError {
  if (error instanceof ApiError) return error
  if (isUnavailable(error)) return new ApiError('service_unavailable')
  const { validation, validationContext, code, statusCode } = error as Partial<FastifyError>
  const issue = validation?.[0] as ValidationIssue | undefined
  if (issue !== undefined) return new ApiError('invalid_request', validationMessage(validationContext ?? 'request', issue))
  if (code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE') return new ApiError('unsupported_media_type')
  if (code === 'FST_ERR_CTP_BODY_TOO_LARGE') return new ApiError('payload_too_large', 'The request body is larger than the 16384-byte limit.')
  if (code === 'FST_ERR_CTP_INVALID_CONTENT_LENGTH') return new ApiError('invalid_request', 'Content-Length does not match the length of the body')
  if (code === 'FST_ERR_BAD_URL') return new ApiError('invalid_request', 'The request URL is malformed')
  if (code === 'FST_ERR_MAX_PARAM_LENGTH') return new ApiError('invalid_request', 'A path parameter is too long')
  return statusCode !== undefined && statusCode >= 400 && statusCode < 500 ? new ApiError('invalid_request') : new ApiError('internal_error')
}

// each parsed body's literals whose fraction parsing rounded away, until validation has run
const rounded = new WeakMap<object, RoundedLiteral[]>()

/** A request body: JSON in UTF-8 (a declared charset other than UTF-8 is 415), not empty, its int64 values exact. */
export function readJsonBody (contentType: string | undefined, bytes: Buffer): unknown {
  const charset = /;\s*charset\s*=\s*"?([^";\s]+)/i.exec(contentType ?? '')?.[1]?.toLowerCase()
  if (charset !== undefined && charset !== 'utf-8' && charset !== 'utf8') throw new ApiError('unsupported_media_type', `The request body must be JSON in UTF-8; got charset=${charset}.`)
  let text: string
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes)
  } catch {
    throw new ApiError('malformed_json', 'The request body is not valid UTF-8.')
  }
  if (text.trim() === '') throw new ApiError('invalid_request', 'body: a JSON object is required, but the body is empty')
  let parsed: ReturnType<typeof parseBody>
  try {
    parsed = parseBody(text)
  } catch (error) {
    const reason = (error as Error).message
    throw /forbidden prototype property/.test(reason)
      ? new ApiError('invalid_request', 'body: the keys "__proto__" and "constructor.prototype" are not allowed')
      : new ApiError('malformed_json', `The request body is not valid JSON: ${reason}`)
  }
  if (parsed.rounded.length > 0 && typeof parsed.value === 'object' && parsed.value !== null) rounded.set(parsed.value, parsed.rounded)
  return parsed.value
}

/** After validation: an integer field whose literal had a fraction that parsing rounded away (`1.0000000000000001`) is a 400. */
export function roundedIntegerProblem (body: unknown): ApiError | undefined {
  if (typeof body !== 'object' || body === null) return undefined
  const found = rounded.get(body)?.find(({ field }) => field === undefined || typeof (body as Record<string, unknown>)[field] === 'number')
  return found === undefined
    ? undefined
    : new ApiError('invalid_request', `body: ${found.field === undefined ? 'a number' : `field "${found.field}"`} must be an integer, got ${found.literal}, which has a fractional part`)
}

/**
 * Ajv without coercion (`"5"` is no integer), defaults filled in, the first error only; path, query and header
 * values are text, so the integers among them written in plain decimal become numbers (an int64 beyond 2^53 a
 * bigint) before the check, and anything else fails it.
 */
export function validatorCompiler (): FastifySchemaCompiler<unknown> {
  const ajv = new Ajv({ useDefaults: true, coerceTypes: false, allErrors: false, verbose: true })
  ajv.addKeyword({ keyword: 'int64', schemaType: 'object', errors: true, compile: int64Check })
  return ({ schema, httpPart }) => {
    const validate = ajv.compile(schema as object)
    if (httpPart === 'body') return validate
    const properties = Object.entries((schema as { properties?: Record<string, { type?: string, int64?: unknown }> }).properties ?? {})
    const integers = properties.filter(([, property]) => property.type === 'integer' || property.int64 !== undefined)
    const check = ((data: Record<string, unknown>) => {
      for (const [name, property] of integers) {
        const value = data[name]
        if (typeof value === 'string' && /^-?\d+$/.test(value)) data[name] = property.int64 === undefined ? Number(value) : decimalInteger(value)
      }
      const valid = validate(data)
      check.errors = validate.errors
      return valid
    }) as ValidateFunction
    return check
  }
}

/** A fixed window per key: its `RateLimit` fields on the answer, and a 429 past its quota (`onRejected` told). */
export function fixedWindow (name: string, quota: number, windowMs: number, what: string, onRejected: () => void) {
  const windows = new Map<string, { count: number, start: number }>()
  const policy = `"${name}";q=${quota};w=${Math.ceil(windowMs / 1000)}`
  return (key: string, reply: FastifyReply): ApiError | undefined => {
    const now = Date.now()
    let window = windows.get(key)
    if (window === undefined || window.start + windowMs <= now) {
      if (windows.size > 10_000) for (const [old, { start }] of windows) if (start + windowMs <= now) windows.delete(old)
      window = { count: 0, start: now }
      windows.set(key, window)
    }
    window.count++
    const reset = Math.max(1, Math.ceil((window.start + windowMs - now) / 1000))
    reply.header('ratelimit-policy', policy).header('ratelimit', `"${name}";r=${Math.max(0, quota - window.count)};t=${reset}`)
    if (window.count <= quota) return undefined
    onRejected()
    return new ApiError('rate_limited', `${what}: at most ${quota} per ${Math.ceil(windowMs / 1000)} s (policy "${name}"); retry in ${reset} s.`, { 'retry-after': String(reset) })
  }
}

/** The 404 of a path no route serves. */
export function noRoute (request: FastifyRequest): ApiError {
  const path = request.url.split('?')[0] ?? ''
  return new ApiError('not_found', `No route ${request.method} ${path}${path.length > 1 && path.endsWith('/') ? ' (no path ends in "/")' : ''}; the API is described at /v1/openapi.json.`)
}

/** The not-found handler: 404, or 501 for a method the server does not recognize at all. */
export async function notFound (request: FastifyRequest): Promise<never> {
  const methods = request.server.supportedMethods
  if (!methods.includes(request.method)) throw new ApiError('not_implemented', `The method ${request.method} is not implemented by this server; it recognizes ${methods.join(', ')}.`)
  throw noRoute(request)
}

/** The stand-in route that answers 405 with `Allow` for every method `url` does not have. */
export function methodNotAllowed (supported: readonly string[], url: string, allowed: string[]): RouteOptions {
  const allow = [...allowed, ...(allowed.includes('GET') ? ['HEAD'] : [])].join(', ')
  return {
    method: supported.filter((method) => !allow.split(', ').includes(method)),
    url,
    config: { methodNotAllowed: true },
    onRequest: async (request) => { throw new ApiError('method_not_allowed', `${request.method} is not allowed on ${request.url.split('?')[0] ?? url}; allowed: ${allow}`, { allow }) },
    handler: async () => {}
  }
}

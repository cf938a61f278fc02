/**
 * What the contract-equal peer promises, written from the API's documents (docs/api-decisions.md, the OpenAPI
 * document's schemas and messages), not from the service's code: its errors, the validation messages, the JSON of
 * a pet with exact int64 values, the signed list cursor, the bearer key, the ETag and the URL as logged.
 */
import { createHmac, hash, timingSafeEqual } from 'node:crypto'
import secureJson from 'secure-json-parse'

/** The error codes the peer's operations can answer, with their status and default message. */
const ERRORS = {
  invalid_request: [400, 'The request is invalid.'],
  malformed_json: [400, 'The request body is not valid JSON.'],
  invalid_cursor: [400, 'The cursor is not one this service issued for this query.'],
  unauthorized: [401, 'A valid API key is required: send "Authorization: Bearer <API key>".'],
  insufficient_scope: [403, 'This API key may not call this operation: its role is below the one the operation needs.'],
  pet_not_found: [404, 'No pet has this id.'],
  not_found: [404, 'No such resource.'],
  method_not_allowed: [405, 'This method is not allowed on this resource.'],
  gone: [410, 'This operation has been removed.'],
  payload_too_large: [413, 'The request body is too large.'],
  unsupported_media_type: [415, 'The request body must be application/json.'],
  rate_limited: [429, 'Too many requests; retry after the time given in Retry-After.'],
  internal_error: [500, 'An unexpected error occurred; it has been logged.'],
  not_implemented: [501, 'This operation is not implemented.'],
  service_unavailable: [503, 'The service is temporarily unavailable; retry shortly.'],
  overloaded: [503, 'This instance is overloaded and turned the request away unread; retry after Retry-After seconds.']
} as const satisfies Record<string, readonly [number, string]>

export type ErrorCode = keyof typeof ERRORS

/** An answer in the Error shape: `{code, message, status}`, with headers of its own. */
export class ApiError extends Error {
  readonly code: ErrorCode
  readonly status: number
  readonly headers: Record<string, string>

  constructor (code: ErrorCode, message?: string, headers: Record<string, string> = {}) {
    const text = message ?? ERRORS[code][1]
    // a message may quote what the client sent: at most 1000 characters
    const characters = [...text]
    super(characters.length <= 1000 ? text : characters.slice(0, 999).join('') + '…')
    this.code = code
    this.status = ERRORS[code][0]
    this.headers = this.status === 503 ? { 'retry-after': '1', ...headers } : headers
  }

  get body (): string {
    return JSON.stringify({ code: this.code, message: this.message, status: this.status })
  }
}

export const PET_STATUSES = ['available', 'pending', 'sold'] as const
export type PetStatus = typeof PET_STATUSES[number]

/** A pet; `categoryId` is a bigint only beyond ±(2^53−1). */
export interface Pet { id: number, name: string, categoryId: number | bigint, status: PetStatus }

/** A pet's JSON, int64 values digit for digit. */
export function petJson (pet: Pet): string {
  return `{"id":${pet.id},"name":${JSON.stringify(pet.name)},"categoryId":${String(pet.categoryId)},"status":"${pet.status}"}`
}

export const INT64_MIN = -(2n ** 63n)
export const INT64_MAX = 2n ** 63n - 1n

/** The text of a name's `pattern` error. */
const NAME_RULE = 'text with at least one visible character (not Unicode White_Space or Default_Ignorable_Code_Point) ' +
  'and no control characters (Cc), unpaired surrogates (Cs) or bidirectional controls (Bidi_Control)'
const NOT_IN_NAME = '\\p{Cc}\\p{Cs}\\p{Bidi_Control}'
const BLANK = '\\p{White_Space}\\p{Default_Ignorable_Code_Point}'

/** JSON Schemas of the routes, for Ajv; `int64` is the peer's keyword for an exact 64-bit integer. */
export const SCHEMAS = {
  newPet: {
    type: 'object',
    additionalProperties: false,
    required: ['name', 'categoryId'],
    properties: {
      name: { type: 'string', minLength: 1, maxLength: 100, pattern: `^[^${NOT_IN_NAME}]*[^${NOT_IN_NAME}${BLANK}][^${NOT_IN_NAME}]*$` },
      categoryId: { int64: { minimum: INT64_MIN.toString(), maximum: INT64_MAX.toString() } },
      status: { type: 'string', enum: PET_STATUSES }
    }
  },
  listQuery: {
    type: 'object',
    additionalProperties: false,
    properties: {
      limit: { type: 'integer', minimum: 1, maximum: 100, default: 20 },
      status: { type: 'string', enum: PET_STATUSES },
      cursor: { type: 'string', minLength: 1, maxLength: 512 }
    }
  },
  noQuery: { type: 'object', additionalProperties: false, properties: {} },
  petIdParams: { type: 'object', required: ['petId'], properties: { petId: { int64: { minimum: '1', maximum: INT64_MAX.toString() } } } },
  getPetHeaders: { type: 'object', properties: { 'if-none-match': { type: 'string', maxLength: 4096 } } }
} as const

/** One Ajv error, as the peer's Ajv (verbose) gives it. */
export interface ValidationIssue {
  keyword: string
  instancePath: string
  params: Record<string, unknown>
  message?: string
  parentSchema?: { properties?: Record<string, unknown> }
  data?: unknown
}

const PART_NAMES: Record<string, string> = { body: 'body', querystring: 'query parameter', params: 'path parameter', headers: 'header' }

/** The 400's message for the first issue Ajv found in `part`: the field and the problem. */
export function validationMessage (part: string, issue: ValidationIssue): string {
  const partName = PART_NAMES[part] ?? part
  const path = issue.instancePath.split('/').slice(1).map((token) => token.replace(/~1/g, '/').replace(/~0/g, '~'))
  const field = (name: string): string => part === 'body' ? `body: field "${name}"` : `${partName} "${name}"`
  const p = issue.params
  switch (issue.keyword) {
    case 'required': {
      const missing = String(p.missingProperty)
      return part === 'body' && path.length === 0 ? `body: field "${missing}" is required` : `${partName} "${[...path, missing].join('.')}" is required`
    }
    case 'additionalProperties': {
      const extra = String(p.additionalProperty)
      if (part === 'querystring' && path.length === 0) {
        const known = Object.keys(issue.parentSchema?.properties ?? {})
        return `query parameter "${extra}" is unknown; ${known.length === 0 ? 'this operation takes no query parameters' : `the known ones are ${known.map((name) => `"${name}"`).join(', ')}`}`
      }
      return `${field([...path, extra].join('.'))} is not allowed${extra === 'id' ? ' (ids are assigned by the service)' : ''}`
    }
  }
  const problem = issue.keyword === 'type'
    ? `must be ${/^[aeiou]/.test(String(p.type)) ? 'an' : 'a'} ${String(p.type)}`
    : issue.keyword === 'enum'
      ? `must be one of ${(p.allowedValues as unknown[]).map((value) => JSON.stringify(value)).join(', ')}`
      : issue.keyword === 'minimum' || issue.keyword === 'maximum'
        ? `must be ${String(p.comparison)} ${String(p.limit)}`
        : issue.keyword === 'minLength'
          ? (Number(p.limit) === 1 ? 'must not be empty' : `must be at least ${String(p.limit)} characters long`)
          : issue.keyword === 'maxLength'
            ? `must be at most ${String(p.limit)} characters long`
            : issue.keyword === 'pattern'
              ? `must be ${NAME_RULE}`
              : issue.message ?? 'is invalid'
  if (path.length === 0) return `${partName} ${problem}`
  return `${field(path.join('.'))} ${problem}${issue.keyword === 'type' && issue.data === null ? ', not null' : ''}`
}

/** Ajv's custom-keyword validator: the errors of its last call on itself. */
export type KeywordCheck = ((data: unknown) => boolean) & { errors?: Array<Partial<ValidationIssue>> }

/** The int64 check, as Ajv errors: a number without a fraction or a bigint, within the bounds. */
export function int64Check (range: { minimum: string, maximum: string }): KeywordCheck {
  const minimum = BigInt(range.minimum)
  const maximum = BigInt(range.maximum)
  const check: KeywordCheck = (data) => {
    const fail = (keyword: string, params: Record<string, unknown>): false => { check.errors = [{ keyword, params }]; return false }
    // ±Infinity (a literal too long for a double) is a whole number beyond every bound
    if (typeof data !== 'bigint' && (typeof data !== 'number' || !(Number.isInteger(data) || Math.abs(data) === Infinity))) return fail('type', { type: 'integer' })
    if (data < minimum) return fail('minimum', { comparison: '>=', limit: minimum })
    if (data > maximum) return fail('maximum', { comparison: '<=', limit: maximum })
    return true
  }
  return check
}

/** A path or query integer: plain decimal digits only, an int64 beyond 2^53 as a bigint; anything else stays text. */
export function decimalInteger (text: string): number | bigint | string {
  if (!/^-?\d+$/.test(text)) return text
  if (text.length <= 15) return Number(text)
  const value = BigInt(text)
  return value >= BigInt(Number.MIN_SAFE_INTEGER) && value <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(value) : value
}

// a number literal's parts: sign, integer digits, fraction digits, exponent
const NUMBER = /^(-?)(\d+)(?:\.(\d+))?(?:[eE]([+-]?\d+))?$/
const TOKENS = /"(?:[^"\\]|\\.)*"|-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?|:/g
const MARKER = `int64:${Math.random().toString(36).slice(2)}:`

/** The exact value of a literal that is a whole number (`1.0`, `1e2`); undefined when it has a fraction, or is absurdly long. */
function wholeValue (literal: string): bigint | undefined {
  // not JSON (`012`): left for the parser to refuse
  if (/^-?0\d/.test(literal)) return undefined
  const [, sign = '', integer = '', fraction = '', exponent = '0'] = NUMBER.exec(literal) ?? []
  const digits = (integer + fraction).replace(/^0+/, '')
  const significant = digits.replace(/0+$/, '')
  const scale = Number(exponent) - fraction.length + (digits.length - significant.length)
  if (significant === '') return 0n
  if (scale < 0 || significant.length + scale > 1000) return undefined
  return (sign === '-' ? -1n : 1n) * BigInt(significant) * 10n ** BigInt(scale)
}

/** A literal whose fraction JSON.parse rounded away, and the top-level field it was the value of. */
export interface RoundedLiteral { literal: string, field: string | undefined }

/**
 * A request body's JSON: whole numbers beyond ±(2^53−1) parsed as exact bigints (JSON.parse would round them),
 * `__proto__` and `constructor.prototype` refused, and the literals whose fraction parsing rounded away listed,
 * for the route to refuse once validation has said which fields are integers.
 */
export function parseBody (text: string): { value: unknown, rounded: RoundedLiteral[] } {
  const rounded: RoundedLiteral[] = []
  let big = false
  let lastString: string | undefined
  let field: string | undefined
  for (const [token] of text.matchAll(TOKENS)) {
    if (token.startsWith('"')) {
      lastString = token
      field = undefined
    } else if (token === ':') {
      try { field = lastString === undefined ? undefined : JSON.parse(lastString) as string } catch { field = undefined }
    } else {
      const exact = wholeValue(token)
      if (exact === undefined && /[.eE]/.test(token) && Number.isInteger(Number(token))) rounded.push({ literal: token, field })
      if (exact !== undefined && (exact > BigInt(Number.MAX_SAFE_INTEGER) || exact < BigInt(Number.MIN_SAFE_INTEGER))) big = true
      field = undefined
    }
  }
  const options = { protoAction: 'error', constructorAction: 'error' } as const
  if (!big) return { value: secureJson.parse(text, undefined, options), rounded }
  const marked = text.replace(/"(?:[^"\\]|\\.)*"|-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?/g, (token) => {
    const exact = token.startsWith('"') ? undefined : wholeValue(token)
    return exact !== undefined && (exact > BigInt(Number.MAX_SAFE_INTEGER) || exact < BigInt(Number.MIN_SAFE_INTEGER)) ? `"${MARKER}${exact}"` : token
  })
  try {
    return { value: secureJson.parse(marked, (_key, value: unknown) => typeof value === 'string' && value.startsWith(MARKER) ? BigInt(value.slice(MARKER.length)) : value, options), rounded }
  } catch (error) {
    // malformed: the error of the text as sent
    secureJson.parse(text, undefined, options)
    throw error
  }
}

/** Where a list page starts: after `afterId`, within the `status` filter. */
export interface CursorPosition { afterId: number, status: PetStatus | undefined }

/** The opaque list cursor: `v1.<afterId>.<status>` in base64url, and its HMAC-SHA-256 (16 bytes) under the store's secret. */
export class Cursors {
  readonly #secret: Buffer
  constructor (secret: string) { this.#secret = Buffer.from(secret, 'base64url') }

  encode ({ afterId, status }: CursorPosition): string {
    const payload = `v1.${afterId}.${status ?? ''}`
    return `${Buffer.from(payload).toString('base64url')}.${this.#tag(payload).toString('base64url')}`
  }

  decode (cursor: string): CursorPosition | undefined {
    const parts = cursor.split('.')
    if (parts.length !== 2) return undefined
    const payload = Buffer.from(parts[0] as string, 'base64url').toString('utf8')
    const tag = Buffer.from(parts[1] as string, 'base64url')
    const expected = this.#tag(payload)
    if (tag.length !== expected.length || !timingSafeEqual(tag, expected)) return undefined
    const match = /^v1\.(\d{1,16})\.([a-z]*)$/.exec(payload)
    const afterId = Number(match?.[1])
    const status = match?.[2] === '' ? undefined : match?.[2] as PetStatus
    if (match === null || !Number.isSafeInteger(afterId) || (status !== undefined && !PET_STATUSES.includes(status))) return undefined
    return { afterId, status }
  }

  #tag (payload: string): Buffer {
    return createHmac('sha256', this.#secret).update(payload).digest().subarray(0, 16)
  }
}

/** The token of `Authorization: Bearer <token>` (RFC 6750 b64token, scheme case-insensitive), or why there is none. */
export function bearerToken (header: string | undefined): { token: string } | 'missing' | 'malformed' {
  if (header === undefined || header.trim() === '') return 'missing'
  const token = /^bearer +([A-Za-z0-9\-._~+/]+=*) *$/i.exec(header)?.[1]
  return token === undefined ? 'malformed' : { token }
}

/** The SHA-256 of a key, hex: what `api_keys.key_hash` holds. */
export const keyHash = (key: string): string => hash('sha256', key, 'hex')

/** A strong ETag of an answer's bytes. */
export const strongEtag = (body: string): string => `"${hash('sha256', body, 'base64url').slice(0, 27)}"`

/** Whether `If-None-Match` matches `etag`: `*`, or any listed tag under the weak comparison. */
export function ifNoneMatch (header: string | undefined, etag: string): boolean {
  if (header === undefined) return false
  if (header.trim() === '*') return true
  for (const match of header.matchAll(/(?:W\/)?("[^"]*")/g)) if (match[1] === etag) return true
  return false
}

const SECRET_PARAMETER = /^(x[-_]?)?(access[-_]?token|api[-_]?key|key|token|auth|authorization|bearer)$/i

/** The URL as logged: a `petstore_` key anywhere, and the values of parameters that may hold one, redacted. */
export function redactUrl (url: string): string {
  if (!url.includes('?') && !url.includes('petstore_')) return url
  const cleaned = url.replace(/petstore_[A-Za-z0-9_-]{43}/g, '[redacted]')
  const question = cleaned.indexOf('?')
  if (question === -1) return cleaned
  const query = cleaned.slice(question + 1).split('&').map((pair) => {
    const equals = pair.indexOf('=')
    let name = equals === -1 ? pair : pair.slice(0, equals)
    try { name = decodeURIComponent(name) } catch {}
    return equals !== -1 && SECRET_PARAMETER.test(name) ? `${pair.slice(0, equals)}=[redacted]` : pair
  })
  return `${cleaned.slice(0, question)}?${query.join('&')}`
}

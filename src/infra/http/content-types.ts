import type { FastifyBodyParser, FastifyInstance, FastifyReply, FastifyRequest, RequestPayload } from 'fastify'
import secureJson from 'secure-json-parse'
import { ApiError } from '../errors/catalogue.js'
import { isWholeNumberLiteral, parseJsonExactly, unsafeWholeValue } from '../json/exact-json.js'
import type { HeaderSpec } from '../schemas/responses.js'

/** Largest request body accepted, in bytes (a NewPet needs a few hundred). */
export const BODY_LIMIT_BYTES = 16 * 1024

/** The message of a 413. */
export const BODY_TOO_LARGE_MESSAGE = `The request body is larger than the ${BODY_LIMIT_BYTES}-byte limit.`

const PARSE_OPTIONS = { protoAction: 'error', constructorAction: 'error' } as const
const UTF8 = new TextDecoder('utf-8', { fatal: true })

// strings (skipped whole, escapes included), number literals, and the colon that ends a key
const JSON_TOKENS = /"(?:[^"\\]|\\.)*"|-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?|:/g

/** A number literal whose value has a fractional part that JSON.parse rounded away. */
interface RoundedLiteral {
  literal: string
  /** The key it was the value of (undefined inside arrays). */
  field: string | undefined
}

/** What the scan of a body found among its number literals. */
interface NumberLiterals {
  rounded: RoundedLiteral[]
  /** Some whole number is beyond ±(2^53−1), which JSON.parse would round: the body is parsed exactly. */
  unsafe: boolean
}

/**
 * JSON.parse would turn `1.0000000000000001` or `9007199254740990.6` into an integer
 * silently. Such literals are noted at parse time and judged after validation (see
 * {@link refuseRoundedIntegers}), when the schema has said which fields are integers.
 * A whole number written with a fraction or exponent (`1.0`, `1e2`) is an integer, as
 * JSON Schema says, and is not noted; one beyond 2^53 (an int64 such as `9007199254740993`
 * or `1e18`) marks the body for the exact parse. Runs before the parse, which it chooses.
 */
function scanNumberLiterals (text: string): NumberLiterals {
  const found: NumberLiterals = { rounded: [], unsafe: false }
  let lastString: string | undefined
  let field: string | undefined
  for (const [token] of text.matchAll(JSON_TOKENS)) {
    if (token.startsWith('"')) {
      lastString = token
      field = undefined
    } else if (token === ':') {
      field = lastString === undefined ? undefined : JSON.parse(lastString) as string
    } else {
      if (/[.eE]/.test(token) && Number.isInteger(Number(token)) && !isWholeNumberLiteral(token)) {
        found.rounded.push({ literal: token, field })
      } else if (!found.unsafe && unsafeWholeValue(token) !== undefined) {
        found.unsafe = true
      }
      field = undefined
    }
  }
  return found
}

// the rounded literals of each parsed body, kept beside it until validation has run
const roundedLiterals = new WeakMap<object, RoundedLiteral[]>()

const secureParse = (text: string, reviver?: (this: unknown, key: string, value: unknown) => unknown): unknown =>
  secureJson.parse(text, reviver, PARSE_OPTIONS)

function parseJsonBody (body: Buffer): unknown {
  let text: string
  try {
    text = UTF8.decode(body)
  } catch {
    throw new ApiError('malformed_json', 'The request body is not valid UTF-8.')
  }
  if (text.trim() === '') throw new ApiError('invalid_request', 'body: a JSON object is required, but the body is empty')
  let literals: NumberLiterals | undefined
  try {
    literals = scanNumberLiterals(text)
  } catch {
    // malformed text (a key with a bad escape): the parser below says what is wrong
  }
  let value: unknown
  try {
    // rare (an int64 beyond 2^53): such numbers are parsed as exact bigints (json/exact-json.ts), with the same
    // parser, errors and prototype-key refusal; otherwise the native parse alone
    value = literals?.unsafe === true ? parseJsonExactly(text, secureParse) : secureParse(text)
  } catch (error) {
    const reason = (error as Error).message
    throw /forbidden prototype property/.test(reason)
      ? new ApiError('invalid_request', 'body: the keys "__proto__" and "constructor.prototype" are not allowed')
      : new ApiError('malformed_json', `The request body is not valid JSON: ${reason}`)
  }
  const rounded = literals?.rounded ?? []
  if (rounded.length > 0 && typeof value === 'object' && value !== null) roundedLiterals.set(value, rounded)
  return value
}

// RFC 8259 JSON is UTF-8; a body declared in another charset would be read wrongly
const CHARSET = /;\s*charset\s*=\s*"?([^";\s]+)/i

function assertUtf8Charset (contentType: string | undefined): void {
  const charset = CHARSET.exec(contentType ?? '')?.[1]?.toLowerCase()
  if (charset !== undefined && charset !== 'utf-8' && charset !== 'utf8') {
    throw new ApiError('unsupported_media_type', `The request body must be JSON in UTF-8; got charset=${charset}.`)
  }
}

/**
 * After validation: a field the schema accepted as an integer but whose literal has a
 * fractional part that parsing rounded away (`1.0000000000000001`) is refused, so an integer
 * field never receives a rounded value. Fields with other problems were already named by validation.
 */
export function refuseRoundedIntegers (body: unknown): void {
  if (typeof body !== 'object' || body === null) return
  for (const { literal, field } of roundedLiterals.get(body) ?? []) {
    if (field !== undefined && typeof (body as Record<string, unknown>)[field] !== 'number') continue
    throw new ApiError('invalid_request', `body: ${field === undefined ? 'a number' : `field "${field}"`} must be an integer, got ${literal}, which has a fractional part`)
  }
}

const parseUtf8Json: FastifyBodyParser<Buffer> = (request, body, done) => {
  try {
    assertUtf8Charset(request.headers['content-type'])
    done(null, parseJsonBody(body))
  } catch (error) {
    done(error as Error, undefined)
  }
}

/** The only content coding a request body may have: none (RFC 7694 names it so in `Accept-Encoding`). */
export const ACCEPTED_CONTENT_ENCODING = 'identity'

export const ACCEPT_ENCODING_HEADER: HeaderSpec = {
  type: 'string',
  description: `RFC 7694: the content codings a request body may have, sent when a body came with a \`Content-Encoding\`: always \`${ACCEPTED_CONTENT_ENCODING}\` (bodies are small; send them uncompressed).`,
  enum: [ACCEPTED_CONTENT_ENCODING],
  example: ACCEPTED_CONTENT_ENCODING
}

/** A body with a content coding (gzip, br, …) is 415 with `Accept-Encoding`, before it is read, rather than parsed as garbled JSON. */
function assertNoContentEncoding (request: FastifyRequest): void {
  const encoding = request.headers['content-encoding']
  if (encoding === undefined || encoding.trim().toLowerCase() === ACCEPTED_CONTENT_ENCODING) return
  const hasBody = request.headers['transfer-encoding'] !== undefined || (request.headers['content-length'] ?? '0') !== '0'
  if (!hasBody) return
  throw new ApiError('unsupported_media_type',
    `The request body has Content-Encoding "${encoding}"; send it uncompressed (Accept-Encoding: ${ACCEPTED_CONTENT_ENCODING}).`,
    { 'accept-encoding': ACCEPTED_CONTENT_ENCODING })
}

/**
 * Accepts request bodies as uncompressed UTF-8 JSON only (anything else is 415), and turns parse
 * failures into Error bodies that say what is wrong. `__proto__` and
 * `constructor.prototype` keys are refused rather than risk prototype pollution.
 */
export function acceptJsonBodiesOnly (app: FastifyInstance): void {
  app.removeAllContentTypeParsers()
  // only on routes that can take a body: Fastify reads none for GET and HEAD, so those requests skip both hooks
  app.addHook('onRoute', (route) => {
    if ([route.method].flat().every((method) => BODILESS_METHODS.has(method))) return
    route.preParsing = [...[route.preParsing ?? []].flat(), refuseContentEncoding]
    // after validation (which names wrong types and unknown fields first)
    route.preHandler = [...[route.preHandler ?? []].flat(), refuseRoundedBodyIntegers]
  })
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, parseUtf8Json)
}

// methods whose requests Fastify never reads a body of
const BODILESS_METHODS = new Set(['GET', 'HEAD'])

function refuseContentEncoding (request: FastifyRequest, _reply: FastifyReply, payload: RequestPayload, done: (error: Error | null, payload?: RequestPayload) => void): void {
  try {
    assertNoContentEncoding(request)
    done(null, payload)
  } catch (error) {
    done(error as Error)
  }
}

function refuseRoundedBodyIntegers (request: FastifyRequest, _reply: FastifyReply, done: (error?: Error) => void): void {
  try {
    refuseRoundedIntegers(request.body)
    done()
  } catch (error) {
    done(error as Error)
  }
}

/** The media types of a JSON Merge Patch body (RFC 7396), the registered one first. */
export const MERGE_PATCH_MEDIA_TYPES = ['application/merge-patch+json', 'application/json'] as const

/** The message of a 415 where a JSON Merge Patch is expected. */
export const MERGE_PATCH_ONLY_MESSAGE = `The request body must be ${MERGE_PATCH_MEDIA_TYPES.join(' or ')}.`

/**
 * In `scope` (an encapsulated context holding only the routes that take a JSON Merge Patch), also
 * accepts `application/merge-patch+json`, parsed exactly as JSON; any other type is 415, naming both.
 */
export function acceptMergePatchBodies (scope: FastifyInstance): void {
  scope.addContentTypeParser(MERGE_PATCH_MEDIA_TYPES[0], { parseAs: 'buffer' }, parseUtf8Json)
  // the catch-all: refused before the body is read, as the framework's own 415 is
  scope.addContentTypeParser('*', (_request, _payload, done) => {
    done(new ApiError('unsupported_media_type', MERGE_PATCH_ONLY_MESSAGE), undefined)
  })
}
